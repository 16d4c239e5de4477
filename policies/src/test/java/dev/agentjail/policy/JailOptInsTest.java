package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code jail.devices} and {@code jail.pre_start}: off and empty unless a policy opts in. */
class JailOptInsTest {
    @Test
    void defaultsAreNoDevicesAndNoCommands() throws Exception {
        JailSettings jail = PolicyLoader.parse("version: 1\njail: {hostname: box}\n", "p.yaml")
                .jail();
        assertEquals(Set.of(), jail.devices());
        assertEquals(List.of(), jail.preStart());
    }

    @Test
    void devicesAndCommandsAreRead() throws Exception {
        JailSettings jail = PolicyLoader.parse(
                        "version: 1\njail:\n  devices: [gpu, audio, gpu]\n  pre_start: [\"npm ci\", \"make deps\"]\n",
                        "p.yaml")
                .jail();
        assertEquals(Set.of(JailSettings.Device.GPU, JailSettings.Device.AUDIO), jail.devices());
        assertEquals(List.of("npm ci", "make deps"), jail.preStart());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            ignoreLeadingAndTrailingWhitespace = false,
            value = {
                "  devices: [usb]|p.yaml:3: jail.devices[0]: unknown device 'usb' (expected gpu, camera or audio)",
                "  devices: gpu|p.yaml:3: jail.devices: expected a list, got 'gpu'",
                "  pre_start: ['  ']|p.yaml:3: jail.pre_start[0]: empty command",
                "  pre_start: [[make]]|p.yaml:3: jail.pre_start[0]: expected a string, got a list"
            })
    void badEntriesNameFileLineAndKey(String line, String expected) {
        PolicyException e = assertThrows(
                PolicyException.class, () -> PolicyLoader.parse("version: 1\njail:\n" + line + "\n", "p.yaml"));
        assertEquals(expected, e.getMessage());
    }
}
