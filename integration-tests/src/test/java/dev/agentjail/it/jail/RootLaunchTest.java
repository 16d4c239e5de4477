package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.agentjail.it.support.Command;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Started as root, the agent is never host root where an ordinary identity can do the work: for a project that belongs
 * to a user the jail runs as that user (kernel uid, file ownership); for a root-owned project it keeps kernel uid 0,
 * and no kernel interface in /proc is writable or root-readable from the jail.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RootLaunchTest {
    /** Inside the jail: every top-level /proc entry that is not a process, walked; what opens for writing is listed. */
    static final String PROC_PROBE = """
            import os, stat

            def opens_for_writing(path):
                try:
                    os.close(os.open(path, os.O_WRONLY))
                    return True
                except OSError:
                    return False

            writable, readable = [], []
            for top in sorted(os.listdir('/proc')):
                path = '/proc/' + top
                if top.isdigit() or os.path.islink(path):
                    continue
                if os.path.isdir(path):
                    for root, dirs, files in os.walk(path):
                        for name in files:
                            inner = os.path.join(root, name)
                            if stat.S_ISREG(os.lstat(inner).st_mode) and opens_for_writing(inner):
                                writable.append(inner)
                    continue
                if opens_for_writing(path):
                    writable.append(path)
                if not os.lstat(path).st_mode & stat.S_IROTH:
                    try:
                        with open(path, 'rb') as f:
                            if f.read(64):
                                readable.append(path)
                    except OSError:
                        pass
            # The first few are enough to tell what broke; the whole list runs to thousands of sysctls.
            print('writable=' + ' '.join(writable[:20]) + (' ...' if len(writable) > 20 else ''))
            print('readable=' + ' '.join(readable[:20]) + (' ...' if len(readable) > 20 else ''))
            """;

    @TempDir
    Path dir;

    @Test
    void aUsersProjectIsJailedAsThatUser() throws IOException {
        assumeTrue(AgentjailRun.isRoot(), "a root launch needs root");
        AgentjailRun.requireBwrap();
        int uid = ensureUser(UnprivilegedUserTest.USER);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        AgentjailRun run = AgentjailRun.in(dir);
        Files.setAttribute(run.project(), "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);

        AgentjailRun.Outcome o = run.bash("""
                echo "uid=$(id -u)"
                echo made > made-by-agent; echo "write=$?"
                python3 -c 'import os; os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))' 2>/dev/null
                echo "sysctl=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals(String.valueOf(uid), o.probe("uid"), o::describe),
                () -> assertEquals("0", o.probe("write"), o::describe),
                () -> assertEquals("1", o.probe("sysctl"), o::describe),
                () -> assertEquals(
                        uid,
                        (Integer) Files.getAttribute(
                                run.project().resolve("made-by-agent"), "unix:uid", LinkOption.NOFOLLOW_LINKS),
                        "the agent's file belongs to the project's owner"),
                () -> assertFalse(o.err().contains("unprivileged mapping instead"), o::describe));
    }

    @Test
    void aRootProjectsJailCanNeitherWriteNorReadTheKernelsInterfacesInProc() throws IOException {
        AgentjailRun.requireBwrap();
        String corePattern = Files.readString(Path.of("/proc/sys/kernel/core_pattern"));
        AgentjailRun run = AgentjailRun.in(dir);
        Files.writeString(run.project().resolve("probe.py"), PROC_PROBE);

        AgentjailRun.Outcome o = run.bash("""
                python3 probe.py
                # Writes back the value it read: should the protection ever fail, the host is left as it was.
                v=$(cat /proc/sys/kernel/core_pattern); printf '%s\n' "$v" > /proc/sys/kernel/core_pattern 2>/dev/null
                echo "core=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("", o.probe("writable"), o::describe),
                () -> assertEquals("", o.probe("readable"), o::describe),
                () -> assertEquals("1", o.probe("core"), o::describe),
                () -> assertEquals(corePattern, Files.readString(Path.of("/proc/sys/kernel/core_pattern"))));
    }

    static int ensureUser(String user) {
        if (Command.run(Duration.ofSeconds(10), List.of("id", "-u", user)).exitCode() != 0) {
            Command.Result add = Command.run(Duration.ofSeconds(30), List.of("useradd", "-m", user));
            assertEquals(0, add.exitCode(), () -> "useradd -m " + user + ": " + add.describe());
        }
        Command.Result id = Command.run(Duration.ofSeconds(10), List.of("id", "-u", user));
        assertEquals(0, id.exitCode(), id::describe);
        return Integer.parseInt(id.out().strip());
    }
}
