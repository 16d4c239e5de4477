package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walk behind the machine policy's checks, as the test's own user stands in for root: entries below the test's
 * directory must be that user's and writable by nobody else; links are followed and their targets checked the same way.
 */
class RootOnlyPathsTest {
    @TempDir
    Path dir;

    private int uid;
    private RootOnlyPaths paths;

    @BeforeEach
    void setUp() throws Exception {
        uid = (Integer) Files.getAttribute(dir, "unix:uid");
        dir = dir.toRealPath();
        paths = new RootOnlyPaths(uid, Optional.of(dir));
    }

    private Path directory(String name, String mode) throws Exception {
        Path d = Files.createDirectories(dir.resolve(name));
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString(mode));
        return d;
    }

    private String refusal(Path path) {
        return assertThrows(MachinePolicyException.class, () -> paths.resolve(path, path.toString()))
                .getMessage();
    }

    @Test
    void aPathOfSafeEntriesResolvesToItself() throws Exception {
        Path file = Files.writeString(directory("a/b", "rwxr-xr-x").resolve("f.yaml"), "x");
        RootOnlyPaths.Entry entry = paths.resolve(file, "f").orElseThrow();
        assertEquals(file, entry.path());
        assertTrue(entry.attributes().isRegularFile());
    }

    @Test
    void aMissingLastNameIsNoEntryButAMissingLinkTargetIsRefused() throws Exception {
        Path a = directory("a", "rwxr-xr-x");
        assertEquals(Optional.empty(), paths.resolve(a.resolve("none.yaml"), "none"));
        Path link = Files.createSymbolicLink(a.resolve("l.yaml"), Path.of("gone.yaml"));
        MachinePolicyException e =
                assertThrows(MachinePolicyException.class, () -> paths.resolve(link, link.toString()));
        assertEquals(link + ": leads to " + a.resolve("gone.yaml") + ", which does not exist", e.getMessage());
    }

    @Test
    void linksAreFollowedRelativeToTheirDirectoryAndAbsolute() throws Exception {
        Path real = Files.writeString(directory("real", "rwxr-xr-x").resolve("p.yaml"), "x");
        Path a = directory("a/b", "rwxr-xr-x");
        Files.createSymbolicLink(a.resolve("rel.yaml"), Path.of("../../real/./p.yaml"));
        Files.createSymbolicLink(a.resolve("abs.yaml"), real);
        Files.createSymbolicLink(dir.resolve("linked-dir"), a);
        assertEquals(
                real, paths.resolve(a.resolve("rel.yaml"), "r").orElseThrow().path());
        assertEquals(
                real, paths.resolve(a.resolve("abs.yaml"), "a").orElseThrow().path());
        assertEquals(
                real,
                paths.resolve(dir.resolve("linked-dir/rel.yaml"), "d")
                        .orElseThrow()
                        .path());
    }

    @Test
    void aLinksTargetIsCheckedLikeAnyEntry() throws Exception {
        Path open = directory("open", "rwxrwxr-x");
        Files.writeString(open.resolve("p.yaml"), "x");
        Path link = Files.createSymbolicLink(directory("a", "rwxr-xr-x").resolve("p.yaml"), open.resolve("p.yaml"));
        String group = Files.getAttribute(open, "posix:group").toString();
        assertEquals(
                link + ": " + open + " is writable by group '" + group + "' (mode 0775); " + RootOnlyPaths.WHY,
                refusal(link));
    }

    @Test
    void aStickyDirectoryThatEveryoneCanWriteIsRefused() throws Exception {
        Path tmp = directory("tmp", "rwxrwxrwx");
        Files.setAttribute(tmp, "unix:mode", 01777);
        Path file = Files.writeString(tmp.resolve("p.yaml"), "x");
        assertEquals(file + ": " + tmp + " is writable by every user (mode 1777); " + RootOnlyPaths.WHY, refusal(file));
    }

    @Test
    void anEntryOfAnotherOwnerIsRefused() throws Exception {
        Path file = Files.writeString(directory("a", "rwxr-xr-x").resolve("p.yaml"), "x");
        RootOnlyPaths strict = new RootOnlyPaths(uid + 1, Optional.of(dir));
        String name = Files.getOwner(file).getName();
        MachinePolicyException e =
                assertThrows(MachinePolicyException.class, () -> strict.resolve(file, file.toString()));
        String who = name.equals(String.valueOf(uid)) ? "uid " + uid : "'" + name + "' (uid " + uid + ")";
        assertEquals(
                file + ": " + dir.resolve("a") + " is owned by " + who + ", not by root; " + RootOnlyPaths.WHY,
                e.getMessage());
    }

    @Test
    void aFileOnTheWayIsNotADirectory() throws Exception {
        Path file = Files.writeString(directory("a", "rwxr-xr-x").resolve("f"), "x");
        assertEquals(file.resolve("p.yaml") + ": " + file + " is not a directory", refusal(file.resolve("p.yaml")));
    }

    @Test
    void aLinkLoopEnds() throws Exception {
        Path a = directory("a", "rwxr-xr-x");
        Files.createSymbolicLink(a.resolve("x"), Path.of("y"));
        Files.createSymbolicLink(a.resolve("y"), Path.of("x"));
        assertEquals(
                a.resolve("x") + ": more than " + RootOnlyPaths.MAX_LINKS + " symbolic links on the way",
                refusal(a.resolve("x")));
    }
}
