package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirsTest {
    @TempDir
    Path dir;

    private Path home;
    private int uid;
    private int gid;

    @BeforeEach
    void setUp() throws IOException {
        home = Files.createDirectories(dir.resolve("home")).toRealPath();
        uid = (Integer) Files.getAttribute(home, "unix:uid");
        gid = (Integer) Files.getAttribute(home, "unix:gid");
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void createsMissingDirectoriesAndTheirParentsPrivate() throws IOException {
        Files.createDirectories(home.resolve(".config"));

        List<Path> created =
                StateDirs.create(home, List.of(Path.of(".pi/agent"), Path.of(".config/opencode")), uid, gid);

        assertEquals(List.of(Path.of(".pi"), Path.of(".pi/agent"), Path.of(".config/opencode")), created);
        assertEquals("rwx------", mode(home.resolve(".pi")));
        assertEquals("rwx------", mode(home.resolve(".pi/agent")));
        assertEquals("rwx------", mode(home.resolve(".config/opencode")));
        assertEquals(List.of(), StateDirs.create(home, List.of(Path.of(".pi/agent")), uid, gid));
    }

    @Test
    void neverCreatesThroughALink() throws IOException {
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Files.createSymbolicLink(home.resolve(".pi"), elsewhere);

        IOException e =
                assertThrows(IOException.class, () -> StateDirs.create(home, List.of(Path.of(".pi/agent")), uid, gid));

        assertTrue(e.getMessage().contains("is a symbolic link"), e.getMessage());
        assertTrue(e.getMessage().contains("create ~/.pi/agent yourself"), e.getMessage());
        assertFalse(Files.exists(elsewhere.resolve("agent")));
    }

    @Test
    void refusesAParentOfAnotherUser() throws IOException {
        assumeTrue(uid == 0, "needs root to give a directory to another user");
        Path pi = Files.createDirectories(home.resolve(".pi"));
        Files.setAttribute(pi, "unix:uid", 4242);

        IOException e =
                assertThrows(IOException.class, () -> StateDirs.create(home, List.of(Path.of(".pi/agent")), 0, 0));

        assertTrue(e.getMessage().contains("belongs to"), e.getMessage());
        assertFalse(Files.exists(pi.resolve("agent")));
    }

    @Test
    void givesWhatItCreatesToTheJailsUser() throws IOException {
        assumeTrue(uid == 0, "needs root to create for another user");
        Files.setAttribute(home, "unix:uid", 4242);

        StateDirs.create(home, List.of(Path.of(".codex")), 4242, 4343);

        assertEquals(4242, Files.getAttribute(home.resolve(".codex"), "unix:uid"));
        assertEquals(4343, Files.getAttribute(home.resolve(".codex"), "unix:gid"));
    }
}
