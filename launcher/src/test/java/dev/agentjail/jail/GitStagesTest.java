package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The staged metadata directory without a jail: which entries are bound how, the mirror in both directions (never
 * following what the agent put in the copy), and what the session's end carries back, drops or quarantines.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GitStagesTest {
    private static final String SESSION = "s1";

    @TempDir
    Path dir;

    private Path project;
    private Path git;
    private final List<String> warnings = new ArrayList<>();

    @BeforeEach
    void repository() throws IOException {
        project = dir.resolve("project").toAbsolutePath();
        git = project.resolve(".git");
        for (String d : List.of("objects/pack", "refs/heads", "logs", "hooks", "info", "branches", "rebase-merge")) {
            Files.createDirectories(git.resolve(d));
        }
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(git.resolve("config"), "[core]\n\tbare = false\n");
        Files.writeString(git.resolve("description"), "unnamed\n");
        Files.write(git.resolve("index"), new byte[] {'D', 'I', 'R', 'C', 0, 0, 0, 2});
        Files.writeString(git.resolve("packed-refs"), "# pack-refs with: peeled\n");
        Files.writeString(git.resolve("rebase-merge/git-rebase-todo"), "pick 1234 one\n");
        Files.writeString(git.resolve("info/exclude"), "");
        Files.createSymbolicLink(git.resolve("weird"), Path.of("/etc"));
    }

    private GitStages.Plan prepare() throws IOException {
        List<ProtectedPath> paths = ProtectedPaths.resolve(
                project, ProtectedPaths.DEFAULTS, Repositories.find(project, List.of()), List.of());
        return GitStages.prepare(
                project,
                paths,
                Repositories.find(project, List.of()),
                SESSION,
                (Integer) Files.getAttribute(project, "unix:uid"),
                (Integer) Files.getAttribute(project, "unix:gid"),
                warnings::add);
    }

    private Path copy() {
        return git.resolve(GitStages.STAGE_PREFIX + SESSION);
    }

    @Test
    void theMetadataDirectoryIsTheCopyWithGitsDataDirectoriesWritableAndTheRestReadOnly() throws IOException {
        GitStages.Plan plan = prepare();
        Map<Path, ProtectedPath> byPath =
                plan.protectedPaths().stream().collect(Collectors.toMap(ProtectedPath::relative, p -> p));

        assertAll(
                () -> assertEquals(
                        ProtectedPath.State.STAGED, byPath.get(Path.of(".git")).state()),
                () -> assertEquals(copy(), byPath.get(Path.of(".git")).source().orElseThrow()),
                () -> assertEquals(
                        ProtectedPath.State.PIN,
                        byPath.get(Path.of(".git/objects")).state()),
                () -> assertEquals(
                        ProtectedPath.State.PIN,
                        byPath.get(Path.of(".git/refs")).state()),
                () -> assertEquals(
                        ProtectedPath.State.PIN,
                        byPath.get(Path.of(".git/logs")).state()),
                () -> assertEquals(
                        ProtectedPath.State.EXISTS,
                        byPath.get(Path.of(".git/config")).state()),
                () -> assertEquals(
                        ProtectedPath.State.EXISTS,
                        byPath.get(Path.of(".git/hooks")).state()),
                () -> assertEquals(
                        ProtectedPath.State.EXISTS,
                        byPath.get(Path.of(".git/info")).state()),
                () -> assertEquals(
                        ProtectedPath.State.EXISTS,
                        byPath.get(Path.of(".git/description")).state()),
                () -> assertEquals(
                        ProtectedPath.State.EXISTS,
                        byPath.get(Path.of(".git/branches")).state()),
                () -> assertFalse(byPath.containsKey(Path.of(".git/HEAD")), "HEAD is the copy's own"),
                () -> assertArrayEquals(
                        Files.readAllBytes(git.resolve("index")), Files.readAllBytes(copy().resolve("index"))),
                () -> assertEquals("ref: refs/heads/main\n", Files.readString(copy().resolve("HEAD"))),
                () -> assertEquals("pick 1234 one\n", Files.readString(copy().resolve("rebase-merge/git-rebase-todo"))),
                () -> assertEquals(Path.of("/etc"), Files.readSymbolicLink(copy().resolve("weird"))),
                () -> assertEquals(List.of(Path.of(".git")), plan.stages().staged()));
        // Parents before children, so no bind covers a child's.
        List<Integer> depths = plan.protectedPaths().stream()
                .map(p -> p.relative().getNameCount())
                .toList();
        assertEquals(depths.stream().sorted().toList(), depths);
        plan.stages().removeCopies();
        assertFalse(Files.exists(copy(), LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void whatEitherSideReplacesReachesTheOtherWhileTheSessionRuns() throws Exception {
        GitStages stages = prepare().stages();
        stages.startMirror();
        try {
            gitWrites(copy(), "HEAD", "ref: refs/heads/feature\n");
            awaitTrue(() -> content(git.resolve("HEAD")).equals("ref: refs/heads/feature\n"));
            gitWrites(git, "ORIG_HEAD", "0123456789012345678901234567890123456789\n");
            awaitTrue(() -> content(copy().resolve("ORIG_HEAD")).startsWith("0123"));
            Files.delete(copy().resolve("packed-refs"));
            awaitTrue(() -> !Files.exists(git.resolve("packed-refs")));
            // A name git does not replace never leaves the copy.
            Files.writeString(copy().resolve("commondir"), "/elsewhere\n");
            gitWrites(copy(), "HEAD", "ref: refs/heads/last\n");
            awaitTrue(() -> content(git.resolve("HEAD")).equals("ref: refs/heads/last\n"));
            assertFalse(Files.exists(git.resolve("commondir"), LinkOption.NOFOLLOW_LINKS));
        } finally {
            stages.close();
        }
    }

    @Test
    void theMirrorNeverFollowsALinkTheAgentPutInTheCopy() throws Exception {
        Path victim = dir.resolve("victim");
        Files.writeString(victim, "precious\n");
        GitStages stages = prepare().stages();
        stages.startMirror();
        try {
            Path link = copy().resolve("link.tmp");
            Files.createSymbolicLink(link, victim);
            Files.move(
                    link, copy().resolve("index"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.createSymbolicLink(copy().resolve("ORIG_HEAD"), victim);
            // The host's git writes both: neither is written through the agent's links, in either direction.
            gitWrites(git, "index", "DIRC host\n");
            gitWrites(git, "ORIG_HEAD", "host\n");
            gitWrites(git, "FETCH_HEAD", "last\n");
            // Events of one directory are handled in order: once the last is mirrored, the others were seen.
            awaitTrue(() -> content(copy().resolve("FETCH_HEAD")).equals("last\n"));
        } finally {
            stages.close();
        }
        Quarantine quarantine = new Quarantine(dir.resolve("quarantine"), Clock.systemUTC());
        stages.finish(quarantine, SESSION);
        assertAll(
                () -> assertEquals("precious\n", Files.readString(victim)),
                () -> assertEquals("DIRC host\n", Files.readString(git.resolve("index"))),
                () -> assertEquals("host\n", Files.readString(git.resolve("ORIG_HEAD"))),
                () -> assertFalse(Files.isSymbolicLink(git.resolve("index"))),
                () -> assertEquals(
                        List.of(".git/ORIG_HEAD", ".git/index"),
                        quarantine.items(SESSION).stream()
                                .map(i -> i.path().toString())
                                .sorted()
                                .toList()));
    }

    @Test
    void theSessionsEndCarriesBackWhatGitReplacesQuarantinesTheRestAndRemovesTheCopy() throws IOException {
        GitStages stages = prepare().stages();
        Files.writeString(copy().resolve("commondir"), "/elsewhere\n");
        Files.writeString(copy().resolve("index.lock"), "stale");
        Files.createDirectories(copy().resolve("new-dir"));
        Files.writeString(copy().resolve("rebase-merge/git-rebase-todo"), "pick 5678 two\n");
        Files.createDirectories(copy().resolve("sequencer"));
        Files.writeString(copy().resolve("sequencer/todo"), "pick 9 x\n");
        Files.writeString(copy().resolve("COMMIT_EDITMSG"), "two\n");
        Files.delete(copy().resolve("weird"));
        Files.createSymbolicLink(copy().resolve("weird"), Path.of("/root"));
        Quarantine quarantine = new Quarantine(dir.resolve("quarantine"), Clock.systemUTC());

        List<String> findings = stages.finish(quarantine, SESSION);

        assertAll(
                () -> assertFalse(Files.exists(git.resolve("commondir"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(git.resolve("index.lock"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(git.resolve("new-dir"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertEquals(Path.of("/etc"), Files.readSymbolicLink(git.resolve("weird"))),
                () -> assertEquals(
                        "pick 1234 one\n",
                        Files.readString(git.resolve("rebase-merge/git-rebase-todo")),
                        "an operation's state the agent changed never reaches the host"),
                () -> assertFalse(Files.exists(git.resolve("sequencer"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertEquals("two\n", Files.readString(git.resolve("COMMIT_EDITMSG"))),
                () -> assertFalse(Files.exists(copy(), LinkOption.NOFOLLOW_LINKS), "the copy is removed"));
        List<String> quarantined =
                quarantine.items(SESSION).stream().map(i -> i.path().toString()).toList();
        assertEquals(
                List.of(".git/commondir", ".git/new-dir", ".git/rebase-merge", ".git/sequencer", ".git/weird"),
                quarantined.stream().sorted().toList());
        assertTrue(
                findings.stream().anyMatch(f -> f.startsWith("new git-metadata " + git.resolve("commondir"))),
                findings::toString);
        assertTrue(
                findings.stream().anyMatch(f -> f.startsWith("changed git-metadata " + git.resolve("weird"))),
                findings::toString);
    }

    @Test
    void aStateDirectoryTheJailsGitRemovedGoesOnTheHostUnlessTheHostChangedIt() throws IOException {
        GitStages stages = prepare().stages();
        deleteTree(copy().resolve("rebase-merge"));
        stages.finish(new Quarantine(dir.resolve("quarantine"), Clock.systemUTC()), SESSION);
        assertFalse(Files.exists(git.resolve("rebase-merge")), "the finished rebase's state is gone on the host too");

        Files.createDirectories(git.resolve("rebase-merge"));
        Files.writeString(git.resolve("rebase-merge/git-rebase-todo"), "pick 1 a\n");
        GitStages again = prepare().stages();
        deleteTree(copy().resolve("rebase-merge"));
        Files.writeString(git.resolve("rebase-merge/git-rebase-todo"), "pick 2 host\n");
        again.finish(new Quarantine(dir.resolve("quarantine"), Clock.systemUTC()), SESSION);
        assertEquals("pick 2 host\n", Files.readString(git.resolve("rebase-merge/git-rebase-todo")));
    }

    @Test
    void aFileBothSidesChangedKeepsTheHostsAndQuarantinesTheJails() throws Exception {
        GitStages stages = prepare().stages();
        stages.startMirror();
        try {
            gitWrites(git, "FETCH_HEAD", "host\n");
            awaitTrue(() -> content(copy().resolve("FETCH_HEAD")).equals("host\n"));
        } finally {
            stages.close();
        }
        // Both change after the mirror stopped: the end's pass sees a change on each side.
        Files.writeString(copy().resolve("FETCH_HEAD"), "jail\n");
        Files.writeString(git.resolve("FETCH_HEAD"), "host again\n");
        Quarantine quarantine = new Quarantine(dir.resolve("quarantine"), Clock.systemUTC());
        stages.finish(quarantine, SESSION);
        assertEquals("host again\n", Files.readString(git.resolve("FETCH_HEAD")));
        assertEquals(
                List.of(".git/FETCH_HEAD"),
                quarantine.items(SESSION).stream().map(i -> i.path().toString()).toList());
    }

    @Test
    void whatGitNeverDoesIsNotMirroredAndStaysInTheQuarantine() throws Exception {
        GitStages stages = prepare().stages();
        stages.startMirror();
        try {
            Files.delete(copy().resolve("index"));
            gitWrites(copy(), "HEAD", "[core]\n\tfsmonitor = x\n");
            gitWrites(copy(), "FETCH_HEAD", "last\n");
            awaitTrue(() -> content(git.resolve("FETCH_HEAD")).equals("last\n"));
        } finally {
            stages.close();
        }
        Quarantine quarantine = new Quarantine(dir.resolve("quarantine"), Clock.systemUTC());
        stages.finish(quarantine, SESSION);
        assertAll(
                () -> assertEquals("ref: refs/heads/main\n", Files.readString(git.resolve("HEAD"))),
                () -> assertTrue(Files.exists(git.resolve("index")), "a removed index is not mirrored"),
                () -> assertEquals(
                        List.of(".git/HEAD"),
                        quarantine.items(SESSION).stream()
                                .map(i -> i.path().toString())
                                .toList()));
    }

    @Test
    void thousandsOfNamesAreOneQuarantinedItemAndAMissingWorktreesDirectoryIsTheHosts() throws IOException {
        GitStages.Plan plan = prepare();
        assertTrue(
                plan.protectedPaths().contains(new ProtectedPath(Path.of(".git/worktrees"), ProtectedPath.State.PIN)),
                plan.protectedPaths()::toString);
        assertTrue(Files.isDirectory(git.resolve("worktrees")), "made on the host, bound writable");
        for (int i = 0; i < GitStages.MAX_ITEMS + 10; i++) {
            Files.writeString(copy().resolve("junk" + i), "x");
        }
        Quarantine quarantine = new Quarantine(dir.resolve("quarantine"), Clock.systemUTC());
        List<String> findings = plan.stages().finish(quarantine, SESSION);
        assertEquals(1, findings.size(), findings::toString);
        assertEquals(1, quarantine.items(SESSION).size());
        assertFalse(Files.exists(copy(), LinkOption.NOFOLLOW_LINKS));
        assertFalse(Files.exists(git.resolve("junk0")));
        assertFalse(Files.exists(git.resolve("worktrees")), "removed again: nothing was written there");
    }

    @Test
    void linksTheAgentLeftInGitsDataAreQuarantinedAndTheUsersStay() throws Exception {
        Files.createDirectories(git.resolve("refs/tags"));
        Files.createSymbolicLink(git.resolve("refs/users-link"), Path.of("heads"));
        Path victim = dir.resolve("victim");
        GitStages stages = prepare().stages();
        Thread.sleep(20);
        Files.createSymbolicLink(git.resolve("logs/HEAD"), victim);
        Files.delete(git.resolve("refs/tags"));
        Files.createSymbolicLink(git.resolve("refs/tags"), dir);
        Files.createDirectories(git.resolve("objects/ab"));
        Files.writeString(git.resolve("objects/ab/cdef"), "an object");
        Quarantine quarantine = new Quarantine(dir.resolve("quarantine"), Clock.systemUTC());

        List<String> findings = stages.finish(quarantine, SESSION);

        assertAll(
                () -> assertFalse(Files.exists(git.resolve("logs/HEAD"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(git.resolve("refs/tags"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertTrue(Files.isSymbolicLink(git.resolve("refs/users-link")), "there before: the user's"),
                () -> assertTrue(Files.exists(git.resolve("objects/ab/cdef"))),
                () -> assertEquals(
                        List.of(".git/logs/HEAD", ".git/refs/tags"),
                        quarantine.items(SESSION).stream()
                                .map(i -> i.path().toString())
                                .sorted()
                                .toList()),
                () -> assertEquals(2, findings.size(), findings::toString));
    }

    /** As git replaces a file: a lock file renamed over it. */
    private static void gitWrites(Path dir, String name, String content) throws IOException {
        Path lock = dir.resolve(name + ".lock");
        Files.writeString(lock, content);
        Files.move(lock, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static String content(Path file) {
        try {
            return Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                    ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8)
                    : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "not within 10 s");
            Thread.sleep(20);
        }
    }

    private static void deleteTree(Path path) throws IOException {
        try (var walk = Files.walk(path)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
