package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MountedPathTest {
    // The root file system, a bind mount of a project's subdirectory elsewhere (with a space in its name), a tmpfs,
    // and a second mount stacked on one point.
    private static final String MOUNTS = String.join(
            "\n",
            "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
            "30 22 8:1 /home/u/p4/my\\040sub /mnt/alias rw,relatime shared:1 - ext4 /dev/sda1 rw",
            "31 22 0:40 / /tmp rw,nosuid shared:2 - tmpfs tmpfs rw",
            "32 31 0:41 / /tmp/stack rw shared:3 - tmpfs tmpfs rw",
            "33 31 0:42 / /tmp/stack rw shared:4 - tmpfs tmpfs rw",
            "");

    private static MountedPath at(String path) {
        return MountedPath.of(Path.of(path), MOUNTS).orElseThrow();
    }

    @Test
    void aBindMountOfASubdirectoryIsWhereItsTreeIs() {
        assertEquals(new MountedPath("8:1", Path.of("/home/u/p4/my sub/x")), at("/mnt/alias/x"));
        assertTrue(at("/mnt/alias").overlaps(at("/home/u/p4")), "inside the project, by another path");
        assertTrue(at("/home/u/p4").overlaps(at("/mnt/alias/x")));
        assertFalse(at("/mnt/alias").overlaps(at("/home/u/p5")));
        assertFalse(at("/home/u/p4").overlaps(at("/home/u/p40")), "a name that only starts alike");
    }

    @Test
    void anotherFileSystemOrTheMountOnTopIsAnotherPlace() {
        assertEquals(new MountedPath("0:40", Path.of("/x")), at("/tmp/x"));
        assertEquals(new MountedPath("0:42", Path.of("/a")), at("/tmp/stack/a"));
        assertFalse(at("/tmp/x").overlaps(at("/x")), "same path, two file systems");
        assertEquals(Optional.empty(), MountedPath.of(Path.of("/x"), ""));
    }

    @Test
    void thisProcessesMountsPlaceItsOwnDirectories() {
        Path dir = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
        assertTrue(MountedPath.of(dir).isPresent());
        assertTrue(MountedPath.of(dir)
                .get()
                .overlaps(MountedPath.of(dir.getParent()).orElseThrow()));
    }
}
