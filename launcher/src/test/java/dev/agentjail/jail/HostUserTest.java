package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostUserTest {
    @TempDir
    Path dir;

    @Test
    void anOrdinaryLauncherKeepsItsOwnIdentity() throws IOException {
        Path passwd = passwd("dev:x:4242:4243:Dev:/home/dev:/bin/sh");
        assertEquals(Optional.empty(), HostUser.forProject(4242, dir, passwd, note -> {}));
    }

    @Test
    void rootRunsTheJailAsTheProjectsOwnerWithTheirGroupAndHome() throws IOException {
        assumeTrue(isRoot(), "chown needs root");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path project = Files.createDirectory(dir.resolve("project"));
        Files.setAttribute(project, "unix:uid", 4242, LinkOption.NOFOLLOW_LINKS);
        Path passwd = passwd("root:x:0:0:root:/root:/bin/sh", "dev:x:4242:4243:Dev:/home/dev:/bin/sh");
        List<String> notes = new ArrayList<>();

        Optional<HostUser> user = HostUser.forProject(0, project, passwd, notes::add);

        assertEquals(Optional.of(new HostUser(4242, 4243, "dev", Path.of("/home/dev"))), user, notes::toString);
    }

    @Test
    void aRootOwnedProjectKeepsTheRootLaunch() throws IOException {
        assumeTrue(isRoot(), "the temporary directory is root's only when the tests run as root");
        Path passwd = passwd("root:x:0:0:root:/root:/bin/sh");
        assertEquals(Optional.empty(), HostUser.forProject(0, dir, passwd, note -> {}));
    }

    @Test
    void anOwnerWithoutPasswdEntryRunsWithAHomeOfItsOwnAndOneWhoCannotReachTheProjectIsRefused() throws IOException {
        assumeTrue(isRoot(), "chown needs root");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setAttribute(open, "unix:uid", 4242, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(open, "unix:gid", 4243, LinkOption.NOFOLLOW_LINKS);
        Path locked = Files.createDirectory(dir.resolve("locked"));
        Path project = Files.createDirectory(locked.resolve("project"));
        Files.setAttribute(project, "unix:uid", 4242, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwx------"));
        List<String> notes = new ArrayList<>();

        assertEquals(
                Optional.of(new HostUser(4242, 4243, "agent", Path.of("/home/agentjail-uid-4242"))),
                HostUser.forProject(0, open, passwd("x:x:1:1::/:/bin/sh"), notes::add));
        IOException refused = assertThrows(
                IOException.class,
                () -> HostUser.forProject(0, project, passwd("dev:x:4242:4243::/home/dev:/bin/sh"), notes::add));

        assertTrue(notes.get(0).contains("uid 4242, which has no entry"), notes::toString);
        assertTrue(refused.getMessage().contains(locked + " is not searchable for them"), refused::getMessage);
    }

    private Path passwd(String... lines) throws IOException {
        return Files.write(
                dir.resolve("passwd-" + lines.length + "-" + lines[lines.length - 1].hashCode()), List.of(lines));
    }

    private static boolean isRoot() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0;
    }
}
