package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.ProjectFiles.Removal;
import dev.agentjail.jail.ProjectFiles.Type;
import dev.agentjail.jail.ProjectFiles.Visit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ProjectFilesTest {
    private static final int DEPTH = 16;
    private static final int ENTRIES = 1000;

    @TempDir
    Path dir;

    Path root;
    Path outside;
    ProjectFiles files;

    @BeforeEach
    void tree() throws IOException {
        root = Files.createDirectories(dir.resolve("root"));
        outside = Files.createDirectories(dir.resolve("outside"));
        files = ProjectFiles.of(root);
        // The same tree inside and outside: a link anywhere on the way makes the path lead to the outside copy,
        // whose empty file and empty directory an operation that followed the link would delete.
        for (Path base : List.of(root, outside)) {
            Files.createDirectories(base.resolve("a/b/c/dir"));
            Files.createFile(base.resolve("a/b/c/file"));
            Files.writeString(base.resolve("a/b/c/full"), "victim");
        }
    }

    /** Replaces the component of a/b/c/file at {@code position} (0: a, 1: a/b, 3: the file) by a link outside. */
    private Path linkAt(int position) throws IOException {
        Path relative = Path.of("a/b/c/file").subpath(0, position + 1);
        Path inside = root.resolve(relative);
        if (Files.isDirectory(inside, LinkOption.NOFOLLOW_LINKS)) {
            Files.move(inside, inside.resolveSibling(inside.getFileName() + ".moved"));
        } else {
            Files.delete(inside);
        }
        Files.createSymbolicLink(inside, outside.resolve(relative));
        return inside;
    }

    private void assertOutsideIntact() {
        assertTrue(Files.isRegularFile(outside.resolve("a/b/c/file")));
        assertTrue(Files.isDirectory(outside.resolve("a/b/c/dir")));
        assertTrue(Files.isRegularFile(outside.resolve("a/b/c/full")));
        assertFalse(Files.exists(outside.resolve("a/b/c/new")));
    }

    private static void assertLink(Path link, Executable operation) {
        LinkInPathException e = assertThrows(LinkInPathException.class, operation);
        assertEquals(link, e.link());
        assertTrue(e.getMessage().contains(link + " is a symbolic link"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1})
    void aDirectoryOnTheWayThatIsALinkStopsEveryOperation(int position) throws IOException {
        Path link = linkAt(position);
        Path quarantine = Files.createDirectories(dir.resolve("quarantine"));
        ProjectFiles target = ProjectFiles.of(quarantine);

        assertLink(link, () -> files.attributes(Path.of("a/b/c/file")));
        assertLink(link, () -> files.stat(Path.of("a/b/c/file")));
        assertLink(link, () -> files.read(Path.of("a/b/c/full"), 100));
        assertLink(link, () -> files.deleteIfEmpty(Path.of("a/b/c/file"), Type.FILE));
        assertLink(link, () -> files.deleteIfEmpty(Path.of("a/b/c/dir"), Type.DIRECTORY));
        assertLink(link, () -> files.deleteTree(Path.of("a/b/c"), DEPTH, ENTRIES));
        assertLink(link, () -> files.move(Path.of("a/b/c/full"), target, Path.of("full"), DEPTH, ENTRIES));
        assertLink(link, () -> files.createDirectories(Path.of("a/b/c/new")));
        assertLink(link, () -> files.walk(Path.of("a/b"), DEPTH, ENTRIES, (p, a) -> Visit.CONTINUE));
        assertLink(link, () -> files.readLink(Path.of("a/b/c/file")));

        List<Path> seen = new ArrayList<>();
        files.walk(Path.of(""), DEPTH, ENTRIES, (p, a) -> {
            seen.add(p);
            return Visit.CONTINUE;
        });
        Path linkRelative = root.relativize(link);
        assertTrue(seen.contains(linkRelative), seen.toString());
        assertTrue(
                seen.stream().noneMatch(p -> p.startsWith(linkRelative) && !p.equals(linkRelative)), seen.toString());
        assertOutsideIntact();
        assertEquals(List.of(), List.of(quarantine.toFile().list()));
    }

    @Test
    void aLinkAsTheLastComponentIsActedOnAsALinkOrRefused() throws IOException {
        Path link = linkAt(3);
        Path quarantine = Files.createDirectories(dir.resolve("quarantine"));
        Path file = Path.of("a/b/c/file");

        assertEquals(Type.SYMLINK, Type.of(files.attributes(file).orElseThrow()));
        assertEquals(Type.SYMLINK, files.stat(file).orElseThrow().type());
        assertLink(link, () -> files.read(file, 100));
        assertLink(link, () -> files.openFile(file).close());
        assertEquals(Removal.KEPT, files.deleteIfEmpty(file, Type.FILE));
        assertEquals(outside.resolve(file), files.readLink(file));

        files.move(file, ProjectFiles.of(quarantine), Path.of("file"), DEPTH, ENTRIES);
        assertTrue(Files.isSymbolicLink(quarantine.resolve("file")));
        Files.move(quarantine.resolve("file"), link);
        assertTrue(files.deleteTree(file, DEPTH, ENTRIES));
        assertFalse(Files.exists(link, LinkOption.NOFOLLOW_LINKS));
        assertOutsideIntact();
    }

    @Test
    void aDirectorySwappedForALinkAfterTheWalkSawItIsNotEntered() throws IOException {
        List<Path> seen = new ArrayList<>();
        LinkInPathException e = assertThrows(
                LinkInPathException.class,
                () -> files.walk(Path.of(""), DEPTH, ENTRIES, (p, a) -> {
                    seen.add(p);
                    if (p.equals(Path.of("a/b"))) {
                        // The visitor saw a directory; before the walk opens it, it becomes a link.
                        Files.move(root.resolve("a/b"), root.resolve("a/b.moved"));
                        Files.createSymbolicLink(root.resolve("a/b"), outside.resolve("a/b"));
                    }
                    return Visit.CONTINUE;
                }));
        assertEquals(root.resolve("a/b"), e.link());
        assertEquals(List.of(Path.of("a"), Path.of("a/b")), seen);
    }

    @Test
    void aDeleteSwappedOutsideDeletesNothingThere() throws IOException {
        // A tree to delete holds links to outside: the links go, their targets stay.
        Files.createSymbolicLink(root.resolve("a/b/c/dir/out"), outside.resolve("a"));
        Files.createSymbolicLink(root.resolve("a/b/c/dir/outfile"), outside.resolve("a/b/c/full"));
        assertTrue(files.deleteTree(Path.of("a"), DEPTH, ENTRIES));
        assertFalse(Files.exists(root.resolve("a"), LinkOption.NOFOLLOW_LINKS));
        assertOutsideIntact();
        assertFalse(files.deleteTree(Path.of("a"), DEPTH, ENTRIES));
    }

    @Test
    void theRootMustNotBeALink() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("rootlink"), root);
        assertLink(link, () -> ProjectFiles.of(link).attributes(Path.of("a")));
        assertLink(link, () -> ProjectFiles.of(link).walk(Path.of(""), DEPTH, ENTRIES, (p, a) -> Visit.CONTINUE));
    }

    @Test
    void walksParentsFirstInNameOrderAndSkipsWhatTheVisitorSkips() throws IOException {
        Files.createDirectories(root.resolve("z/skipped"));
        Files.writeString(root.resolve("b.txt"), "x");
        Files.createSymbolicLink(root.resolve("link"), outside);
        List<String> seen = new ArrayList<>();
        List<String> listed = new ArrayList<>();
        int count = files.walk(Path.of(""), DEPTH, ENTRIES, new ProjectFiles.Visitor() {
            @Override
            public Visit visit(Path relative, java.nio.file.attribute.PosixFileAttributes attributes) {
                seen.add(relative + ":" + Type.of(attributes));
                return relative.equals(Path.of("z")) ? Visit.SKIP_SUBTREE : Visit.CONTINUE;
            }

            @Override
            public void listed(Path directory) {
                listed.add(directory.toString());
            }
        });
        assertEquals(
                List.of(
                        "a:DIRECTORY",
                        "a/b:DIRECTORY",
                        "a/b/c:DIRECTORY",
                        "a/b/c/dir:DIRECTORY",
                        "a/b/c/file:FILE",
                        "a/b/c/full:FILE",
                        "b.txt:FILE",
                        "link:SYMLINK",
                        "z:DIRECTORY"),
                seen);
        assertEquals(List.of("", "a", "a/b", "a/b/c", "a/b/c/dir"), listed);
        assertEquals(9, count);
    }

    @Test
    void aTreeDeeperThanTheBoundIsRefusedNamingTheBoundAndWhere() throws IOException {
        // a/b/c/file is at depth 4: a bound of 4 walks it, a bound of 3 reaches the non-empty a/b/c.
        files.walk(Path.of(""), 4, ENTRIES, (p, a) -> Visit.CONTINUE);
        WalkLimitException e = assertThrows(
                WalkLimitException.class, () -> files.walk(Path.of(""), 3, ENTRIES, (p, a) -> Visit.CONTINUE));
        assertEquals(WalkLimitException.Bound.DEPTH, e.bound());
        assertEquals(root.resolve("a/b/c"), e.where());
        assertTrue(e.getMessage().contains("depth limit of 3"), e.getMessage());
        // An empty directory at the bound is no deeper tree.
        files.walk(Path.of("a/b/c"), 1, ENTRIES, (p, a) -> Visit.CONTINUE);
    }

    @Test
    void moreEntriesThanTheBoundAreRefused() throws IOException {
        for (int i = 0; i < 10; i++) {
            Files.createFile(root.resolve("f" + i));
        }
        WalkLimitException e = assertThrows(
                WalkLimitException.class, () -> files.walk(Path.of(""), DEPTH, 10, (p, a) -> Visit.CONTINUE));
        assertEquals(WalkLimitException.Bound.ENTRIES, e.bound());
        assertEquals(root, e.where());
        assertTrue(e.getMessage().contains("entry limit of 10"), e.getMessage());
    }

    @Test
    void deletesOnlyWhatIsEmpty() throws IOException {
        Files.createDirectories(root.resolve("empty"));
        assertEquals(Removal.DELETED, files.deleteIfEmpty(Path.of("a/b/c/file"), Type.FILE));
        assertEquals(Removal.KEPT, files.deleteIfEmpty(Path.of("a/b/c/full"), Type.FILE));
        assertEquals(Removal.KEPT, files.deleteIfEmpty(Path.of("a/b/c"), Type.DIRECTORY));
        assertEquals(Removal.KEPT, files.deleteIfEmpty(Path.of("empty"), Type.FILE));
        assertEquals(Removal.DELETED, files.deleteIfEmpty(Path.of("empty"), Type.DIRECTORY));
        assertEquals(Removal.ABSENT, files.deleteIfEmpty(Path.of("empty"), Type.DIRECTORY));
        assertEquals(Removal.ABSENT, files.deleteIfEmpty(Path.of("missing/x"), Type.FILE));
        assertEquals(Removal.ABSENT, files.deleteIfEmpty(Path.of("a/b/c/full/x"), Type.FILE));
        assertFalse(Files.exists(root.resolve("a/b/c/file")));
    }

    @Test
    void readsAndStatsWithoutFollowing() throws IOException {
        assertArrayEquals("victim".getBytes(StandardCharsets.UTF_8), files.read(Path.of("a/b/c/full"), 6));
        assertThrows(IOException.class, () -> files.read(Path.of("a/b/c/full"), 5));
        assertThrows(IOException.class, () -> files.read(Path.of("a/b/c/dir"), 5));
        Files.createLink(root.resolve("hard"), root.resolve("a/b/c/full"));
        Files.setPosixFilePermissions(root.resolve("hard"), PosixFilePermissions.fromString("rwxr-x---"));
        ProjectFiles.Stat stat = files.stat(Path.of("hard")).orElseThrow();
        assertEquals(Type.FILE, stat.type());
        assertEquals(6, stat.size());
        assertEquals(2, stat.nlink());
        assertEquals(0100750, stat.mode());
        assertEquals((int) Files.getAttribute(root.resolve("hard"), "unix:uid"), stat.uid());
        assertEquals(
                Files.readAttributes(root.resolve("hard"), BasicFileAttributes.class)
                        .fileKey(),
                stat.fileKey());
        assertTrue(files.stat(Path.of("nothing")).isEmpty());
        assertEquals(Type.DIRECTORY, Type.of(files.attributes(Path.of("")).orElseThrow()));
    }

    @Test
    void resolvesLinksToWhereTheyLeadInsideTheRoot() throws IOException {
        Files.createSymbolicLink(root.resolve("in"), Path.of("a/b/../b/c/full"));
        Files.createSymbolicLink(root.resolve("chain"), Path.of("in"));
        Files.createSymbolicLink(root.resolve("out"), outside.resolve("a/b/c/full"));
        Files.createSymbolicLink(root.resolve("back"), Path.of("../root/a/b/c/full"));
        Files.createSymbolicLink(root.resolve("dangling"), Path.of("nowhere"));
        Files.createSymbolicLink(root.resolve("loop"), Path.of("loop"));
        assertEquals(Path.of("a/b/c/full"), files.resolveLink(Path.of("in")).orElseThrow());
        assertEquals(Path.of("a/b/c/full"), files.resolveLink(Path.of("chain")).orElseThrow());
        assertEquals(Path.of("a/b/c/full"), files.resolveLink(Path.of("back")).orElseThrow());
        assertTrue(files.resolveLink(Path.of("out")).isEmpty());
        assertTrue(files.resolveLink(Path.of("dangling")).isEmpty());
        assertTrue(files.resolveLink(Path.of("loop")).isEmpty());
    }

    @Test
    void movesWithinAFileSystemAndRefusesToReplace() throws IOException {
        Path quarantine = Files.createDirectories(dir.resolve("q"));
        ProjectFiles target = ProjectFiles.of(quarantine);
        target.createDirectories(Path.of("x/y"));
        files.move(Path.of("a/b"), target, Path.of("x/y/b"), DEPTH, ENTRIES);
        assertEquals("victim", Files.readString(quarantine.resolve("x/y/b/c/full")));
        assertFalse(Files.exists(root.resolve("a/b")));
        Files.createFile(root.resolve("a/b"));
        assertThrows(
                FileAlreadyExistsException.class,
                () -> target.move(Path.of("x/y/b"), files, Path.of("a/b"), DEPTH, ENTRIES));
    }

    @Test
    void movesToAnotherFileSystemByCopyingWithoutFollowing() throws IOException {
        Path shm = Path.of("/dev/shm");
        JailPrerequisites.require(
                Files.isDirectory(shm) && !Files.getFileStore(shm).equals(Files.getFileStore(dir)),
                "/dev/shm on a file system other than the test's temporary directory");
        Path other = Files.createTempDirectory(shm, "projectfiles");
        try {
            Files.createSymbolicLink(root.resolve("a/b/c/out"), outside.resolve("a/b/c"));
            Files.setPosixFilePermissions(root.resolve("a/b/c/full"), PosixFilePermissions.fromString("rwx------"));
            ProjectFiles target = ProjectFiles.of(other);
            files.move(Path.of("a/b"), target, Path.of("b"), DEPTH, ENTRIES);
            assertFalse(Files.exists(root.resolve("a/b")));
            assertEquals("victim", Files.readString(other.resolve("b/c/full")));
            assertEquals(
                    PosixFilePermissions.fromString("rwx------"),
                    Files.getPosixFilePermissions(other.resolve("b/c/full")));
            assertTrue(Files.isDirectory(other.resolve("b/c/dir"), LinkOption.NOFOLLOW_LINKS));
            assertEquals(outside.resolve("a/b/c"), Files.readSymbolicLink(other.resolve("b/c/out")));
            assertOutsideIntact();
            // And back, into a directory created without following links.
            target.move(Path.of("b"), files, Path.of("a/b"), DEPTH, ENTRIES);
            assertEquals("victim", Files.readString(root.resolve("a/b/c/full")));
        } finally {
            ProjectFiles.of(other.getParent()).deleteTree(other.getFileName(), DEPTH, ENTRIES);
        }
    }

    @Test
    void createsMissingDirectories() throws IOException {
        files.createDirectories(Path.of("a/new/deeper"));
        assertTrue(Files.isDirectory(root.resolve("a/new/deeper")));
        files.createDirectories(Path.of("a/new/deeper"));
        assertThrows(IOException.class, () -> files.createDirectories(Path.of("a/b/c/full/x")));
    }
}
