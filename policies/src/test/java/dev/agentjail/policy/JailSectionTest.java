package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class JailSectionTest {
    private static JailSettings load(String section) throws PolicyException {
        return PolicyLoader.parse("version: 1\njail:\n" + section, "p.yaml").jail();
    }

    @Test
    void everyKeyLoads() throws Exception {
        assertEquals(
                new JailSettings("Box-7", false, false),
                load("  hostname: Box-7\n  new_session: false\n  share_timezone: FALSE\n"));
        assertEquals(new JailSettings("7", true, true), load("  hostname: 7\n  new_session: \"true\"\n"));
    }

    @Test
    void missingKeysKeepTheirDefaults() throws Exception {
        assertEquals(new JailSettings("agentjail", false, true), load("  new_session: false\n"));
        assertEquals(new JailSettings("agentjail", true, true), JailSettings.defaults());
    }

    /** Each bad value and the exact message: FILE:LINE: KEY: problem. */
    static Stream<Arguments> badSections() {
        return Stream.of(
                arguments("  hostnme: x\n", "p.yaml:3: jail.hostnme: unknown key 'hostnme' (did you mean 'hostname'?)"),
                arguments(
                        "  newsession: false\n",
                        "p.yaml:3: jail.newsession: unknown key 'newsession' (did you mean 'new_session'?)"),
                arguments(
                        "  sandbox: strict\n",
                        "p.yaml:3: jail.sandbox: unknown key 'sandbox' (expected one of: devices, hostname,"
                                + " new_session, pre_start, share_timezone)"),
                arguments("  true\n", "p.yaml:3: jail: expected a mapping, got 'true'"),
                // hostname: one DNS label
                arguments("  hostname: \"\"\n", "p.yaml:3: jail.hostname: invalid hostname '': empty hostname"),
                arguments(
                        "  hostname: box.local\n",
                        "p.yaml:3: jail.hostname: invalid hostname 'box.local': must be a single label, without dots"),
                arguments(
                        "  hostname: my_box\n",
                        "p.yaml:3: jail.hostname: invalid hostname 'my_box': only letters, digits and '-' are"
                                + " allowed"),
                arguments(
                        "  hostname: \"b\u00f6x\"\n",
                        "p.yaml:3: jail.hostname: invalid hostname 'b\u00f6x': only letters, digits and '-' are"
                                + " allowed"),
                arguments(
                        "  hostname: -box\n",
                        "p.yaml:3: jail.hostname: invalid hostname '-box': cannot start or end with '-'"),
                arguments(
                        "  hostname: box-\n",
                        "p.yaml:3: jail.hostname: invalid hostname 'box-': cannot start or end with '-'"),
                arguments(
                        "  hostname: " + "a".repeat(64) + "\n",
                        "p.yaml:3: jail.hostname: invalid hostname '" + "a".repeat(64)
                                + "': longer than 63 characters"),
                arguments("  hostname: [box]\n", "p.yaml:3: jail.hostname: expected a string, got a list"),
                arguments("  hostname:\n", "p.yaml:3: jail.hostname: expected a string, got null"),
                // booleans: true or false, nothing YAML 1.1 would also accept
                arguments("  new_session: yes\n", "p.yaml:3: jail.new_session: expected true or false, got 'yes'"),
                arguments("  new_session: off\n", "p.yaml:3: jail.new_session: expected true or false, got 'off'"),
                arguments("  new_session: 1\n", "p.yaml:3: jail.new_session: expected true or false, got '1'"),
                arguments("  share_timezone:\n", "p.yaml:3: jail.share_timezone: expected true or false, got null"),
                arguments(
                        "  share_timezone: [true]\n",
                        "p.yaml:3: jail.share_timezone: expected true or false, got a list"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badSections")
    void badSectionIsRefusedWithFileLineAndKey(String section, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> load(section));
        assertEquals(message, e.getMessage());
    }
}
