package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentjail.jail.InitCommand.FdFile;
import dev.agentjail.jail.InitCommand.Mode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class InitCommandTest {
    @Test
    void jailFormPassesPortSocketAndEveryLimit() {
        Limits limits = new Limits(100, 200, Limits.UNLIMITED, 4096, 1, 1, 1);
        assertEquals(
                List.of(
                        "/run/agentjail/agentjail-init",
                        "jail",
                        "--port",
                        "3128",
                        "--handoff",
                        "/run/agentjail/handoff.sock",
                        "--audit",
                        "exec,files",
                        "--seccomp-fd",
                        "3",
                        "--nofile",
                        "100",
                        "--nproc",
                        "200",
                        "--as",
                        "unlimited",
                        "--fsize",
                        "4096",
                        "--",
                        "claude",
                        "--resume"),
                InitCommand.jail(
                        JailPaths.INIT,
                        3128,
                        JailPaths.HANDOFF_SOCKET,
                        AuditScope.EXEC_AND_FILES,
                        3,
                        limits,
                        List.of("claude", "--resume")));
    }

    @Test
    void execWithFdsFormOpensEachFileAtItsDescriptor() {
        List<String> argv = InitCommand.execWithFds(
                Path.of("/c/init"),
                List.of(
                        new FdFile(3, Mode.READ, Path.of("/s/seccomp.bpf")),
                        new FdFile(4, Mode.READ_UNLINK, Path.of("/s/args")),
                        new FdFile(5, Mode.WRITE, Path.of("/s/status.json"))),
                List.of("/usr/bin/bwrap", "--args", "4"));
        assertEquals(
                List.of(
                        "/c/init",
                        "exec-with-fds",
                        "--read",
                        "3",
                        "/s/seccomp.bpf",
                        "--read-unlink",
                        "4",
                        "/s/args",
                        "--write",
                        "5",
                        "/s/status.json",
                        "--",
                        "/usr/bin/bwrap",
                        "--args",
                        "4"),
                argv);
    }

    @Test
    void execWithFdsRefusesTerminalDescriptorsAndDuplicates() {
        assertThrows(IllegalArgumentException.class, () -> new FdFile(2, Mode.READ, Path.of("/x")));
        assertThrows(
                IllegalArgumentException.class,
                () -> InitCommand.execWithFds(
                        Path.of("/i"),
                        List.of(new FdFile(3, Mode.READ, Path.of("/a")), new FdFile(3, Mode.READ, Path.of("/b"))),
                        List.of("x")));
    }

    @Test
    void argsFileIsNulTerminatedUtf8() {
        assertArrayEquals(
                "--setenv\0K\0v ä\0".getBytes(StandardCharsets.UTF_8),
                BwrapArgsFile.encode(List.of("--setenv", "K", "v ä")));
        assertThrows(IllegalArgumentException.class, () -> BwrapArgsFile.encode(List.of("a\0b")));
    }
}
