package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.JailSettings.Device;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code jail.devices} (host device binds) and {@code jail.pre_start} (commands before the agent). */
class JailDevicesAndPreStartTest {
    @TempDir
    Path dir;

    private static JailSpec spec(List<Path> devices, List<String> command) {
        return new JailSpec(
                Path.of("/usr/bin/bwrap"),
                Path.of("/c/init"),
                new HostLayout(List.of(), List.of(), List.of()),
                new SessionFiles(Path.of("/s/empty"), Path.of("/s/passwd"), Path.of("/s/group"), Path.of("/s/hosts")),
                Path.of("/w/p"),
                Path.of("/home/u"),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                "agentjail",
                Map.of(),
                true,
                Path.of("/r/h.sock"),
                3128,
                Optional.empty(),
                Limits.DEFAULTS,
                Optional.empty(),
                3,
                OptionalInt.empty(),
                command,
                devices);
    }

    @Test
    void devicesAreBoundWithDeviceAccessRightAfterTheMinimalDev() {
        List<String> argv =
                BwrapCommand.options(spec(List.of(Path.of("/dev/dri"), Path.of("/dev/snd")), List.of("true")));
        int dev = argv.indexOf("--dev");
        assertEquals(
                List.of(
                        "--dev",
                        "/dev",
                        "--dev-bind-try",
                        "/dev/dri",
                        "/dev/dri",
                        "--dev-bind-try",
                        "/dev/snd",
                        "/dev/snd"),
                argv.subList(dev, dev + 8));
        assertTrue(
                BwrapCommand.bindSources(spec(List.of(Path.of("/dev/dri")), List.of("true")))
                        .contains(Path.of("/dev/dri")),
                "device binds count as binds for the exposure checks");
        assertEquals(-1, BwrapCommand.options(spec(List.of(), List.of("true"))).indexOf("--dev-bind-try"));
    }

    @Test
    void onlyPathsBelowDevCanBeDevices() {
        for (String bad : List.of("/etc/shadow", "/dev", "/dev/../etc", "dev/dri")) {
            assertThrows(IllegalArgumentException.class, () -> spec(List.of(Path.of(bad)), List.of("true")), bad);
        }
    }

    @Test
    void hostDevicesFindsOnlyWhatExistsAndNeverFollowsSymlinks() throws Exception {
        Path dev = Files.createDirectories(dir.resolve("dev"));
        Files.createDirectory(dev.resolve("dri"));
        Files.createFile(dev.resolve("nvidia0"));
        Files.createFile(dev.resolve("nvidiactl"));
        Files.createFile(dev.resolve("video0"));
        Files.createSymbolicLink(dev.resolve("snd"), Path.of("/etc"));
        assertEquals(
                List.of(Path.of("/dev/dri"), Path.of("/dev/nvidia0"), Path.of("/dev/nvidiactl")),
                HostDevices.find(Set.of(Device.GPU), dev));
        assertEquals(List.of(Path.of("/dev/video0")), HostDevices.find(Set.of(Device.CAMERA), dev));
        assertEquals(List.of(), HostDevices.find(Set.of(Device.AUDIO), dev), "a symlinked /dev/snd is not bound");
        assertEquals(List.of(), HostDevices.find(Set.of(), dev));
    }

    private record Ran(int exit, String out, String err) {}

    private static Ran sh(List<String> argv) throws Exception {
        Process process = new ProcessBuilder(argv).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        process.getOutputStream().close();
        assertTrue(process.waitFor(20, TimeUnit.SECONDS), "the wrapped command finishes");
        process.getInputStream().transferTo(out);
        process.getErrorStream().transferTo(err);
        return new Ran(process.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void preStartCommandsRunInOrderThenTheAgentWithItsArgumentsIntact() throws Exception {
        List<String> agent =
                List.of("/bin/sh", "-c", "printf 'agent:%s|' \"$@\"; exit 7", "agent", "a b", "$HOME", "'q'");
        List<String> wrapped = PreStart.wrap(List.of("echo one", "cd /; echo two; exit 0"), agent);
        assertEquals(List.of("/bin/sh", "-c"), wrapped.subList(0, 2));
        assertEquals(agent, wrapped.subList(4, wrapped.size()));
        Ran ran = sh(wrapped);
        assertEquals(7, ran.exit(), "the agent's exit code");
        assertEquals("one\ntwo\nagent:a b|agent:$HOME|agent:'q'|", ran.out());
    }

    @Test
    void theFirstFailingCommandEndsTheSessionWithItsExitCode() throws Exception {
        List<String> wrapped = PreStart.wrap(List.of("true", "exit 5", "echo never"), List.of("/bin/echo", "agent"));
        Ran ran = sh(wrapped);
        assertEquals(5, ran.exit());
        assertEquals("", ran.out());
        assertEquals("agentjail: jail.pre_start[1] failed with exit code 5\n", ran.err());
    }

    @Test
    void withoutCommandsTheArgvIsUnchanged() {
        List<String> argv = new ArrayList<>(List.of("claude", "--version"));
        assertEquals(argv, PreStart.wrap(List.of(), argv));
    }
}
