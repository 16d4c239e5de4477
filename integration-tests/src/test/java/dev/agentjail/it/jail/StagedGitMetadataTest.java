package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A repository's metadata directory is read-only as a whole: the jail's git writes a session copy whose files git
 * replaces are mirrored to the host while the session runs, and nothing else it puts there reaches the host's
 * directory, not even for a moment. Each test checks the host while the jail is still running (the jail waits for the
 * test's go-ahead file) and again after it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StagedGitMetadataTest {
    /** The jail's side of the hand-shake: say it is ready, then wait (at most 60 s) for the test's file. */
    private static final String WAIT_FOR_HOST =
            "touch ready; for i in $(seq 1 600); do [ -e checked ] && break; sleep 0.1; done\n";

    @TempDir
    Path dir;

    @Test
    void configAndCodeTheAgentWritesInTheMetadataDirectoryNeverReachTheHostEvenWhileTheSessionRuns() throws Exception {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        Path planted = dir.resolve("planted");
        commitOne(p);
        Files.createDirectories(dir.resolve("elsewhere"));
        HostExecutedSurfacesTest.git(dir.resolve("elsewhere"), "init", "-q", "--bare", "common");
        Files.writeString(
                dir.resolve("elsewhere/common/config"), "[core]\n\tfsmonitor = \"touch " + planted + "-common\"\n");

        CompletableFuture<AgentjailRun.Outcome> session = CompletableFuture.supplyAsync(
                () -> run.bash("""
                echo %1$s > .git/commondir; echo "commondir=$?"
                printf '[core]\\n\\tfsmonitor = "touch %2$s-worktree"\\n' > .git/config.worktree
                echo "worktree=$?"
                mkdir -p .git/branches/x 2>/dev/null; echo "branches=$?"
                ln -s /etc .git/remotes2; echo "link=$?"
                """.formatted(dir.resolve("elsewhere/common"), planted) + WAIT_FOR_HOST));
        awaitFile(p.resolve("ready"), session);
        // The user's shell prompt runs git status in the project while the agent works.
        hostGit(p, "status");
        assertAll(
                () -> assertFalse(Files.exists(p.resolve(".git/commondir"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(p.resolve(".git/config.worktree"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(p.resolve(".git/remotes2"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(Path.of(planted + "-common")), "commondir's fsmonitor ran"),
                () -> assertFalse(Files.exists(Path.of(planted + "-worktree")), "config.worktree's fsmonitor ran"));
        Files.createFile(p.resolve("checked"));
        AgentjailRun.Outcome o = session.get(90, TimeUnit.SECONDS);

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("0", o.probe("commondir"), "the copy is writable: " + o.describe());
        hostGit(p, "status");
        assertAll(
                () -> assertFalse(Files.exists(p.resolve(".git/commondir"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(p.resolve(".git/config.worktree"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(Path.of(planted + "-common")), "commondir's fsmonitor ran"),
                () -> assertFalse(Files.exists(Path.of(planted + "-worktree")), "config.worktree's fsmonitor ran"),
                () -> assertTrue(o.err().contains("git-metadata " + p.resolve(".git/commondir")), o::describe),
                () -> assertFalse(o.err().contains("while the jail ran"), "it was on the host: " + o.describe()));
        List<String> surfaces = new ArrayList<>();
        o.only(AuditRecord.KIND_SESSION_END).path("surfaces").forEach(s -> surfaces.add(s.asText()));
        for (String name : List.of("commondir", "config.worktree", "remotes2")) {
            assertTrue(
                    surfaces.stream().anyMatch(s -> s.contains(".git/" + name + " quarantined")),
                    () -> name + " not quarantined: " + surfaces);
        }
        String id = o.only(AuditRecord.KIND_SESSION_END).path("session").asText();
        Command.Result restore = run.cli("review", "--restore", id + "/project/.git/commondir");
        assertEquals(0, restore.exitCode(), restore::describe);
        assertTrue(Files.exists(p.resolve(".git/commondir"), LinkOption.NOFOLLOW_LINKS), "restored on request");
        assertFalse(
                Files.list(p.resolve(".git"))
                        .anyMatch(e -> e.getFileName().toString().startsWith("agentjail-stage")),
                "the session's copy is removed");
    }

    @Test
    void theJailsCommitsAndCheckoutsReachTheHostWhileItRunsAndTheHostsReachTheJail() throws Exception {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        commitOne(p);

        CompletableFuture<AgentjailRun.Outcome> session =
                CompletableFuture.supplyAsync(() -> run.bash("""
                export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a
                git checkout -q -b feature && echo two > b.txt && git add b.txt && git commit -q -m two
                echo "commit=$?"
                git tag v1 && git pack-refs --all && git branch -q gone && git branch -q -D gone; echo "refs=$?"
                """ + WAIT_FOR_HOST + """
                for i in $(seq 1 50); do [ "$(git rev-parse --abbrev-ref HEAD)" = from-host ] && break; sleep 0.1; done
                echo "head=$(git rev-parse --abbrev-ref HEAD)"
                echo "status=$(git status --porcelain | grep -v -e ready -e checked | wc -l)"
                """));
        awaitFile(p.resolve("ready"), session);
        // The mirror follows within milliseconds (more on a loaded machine): wait until packed-refs has arrived.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(Files.exists(p.resolve(".git/packed-refs"))
                        && Files.readString(p.resolve(".git/packed-refs")).contains("refs/tags/v1"))
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertAll(
                () -> assertEquals("feature", hostGit(p, "rev-parse", "--abbrev-ref", "HEAD")),
                () -> assertEquals("two", hostGit(p, "log", "-1", "--format=%s")),
                () -> assertTrue(hostGit(p, "tag").contains("v1")),
                () -> assertTrue(Files.readString(p.resolve(".git/packed-refs")).contains("refs/tags/v1")),
                () -> assertEquals(
                        "", hostGit(p, "status", "--porcelain", "--untracked-files=no"), "the index is the jail's"));
        hostGit(p, "checkout", "-q", "-b", "from-host");
        Files.createFile(p.resolve("checked"));
        AgentjailRun.Outcome o = session.get(90, TimeUnit.SECONDS);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("0", o.probe("commit"), o::describe),
                () -> assertEquals("0", o.probe("refs"), o::describe),
                () -> assertEquals("from-host", o.probe("head"), "the host's checkout reached the jail"),
                () -> assertEquals("0", o.probe("status"), o::describe),
                () -> assertEquals("from-host", hostGit(p, "rev-parse", "--abbrev-ref", "HEAD")),
                () -> assertFalse(o.err().contains("quarantined"), o::describe));
    }

    @Test
    void anOperationTheAgentLeftInProgressWaitsInTheQuarantineWhateverItWouldRun() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        Path planted = dir.resolve("planted");
        commitOne(p);

        // A merge strategy with a slash is run as a path: git rebase --continue on the host would run ./evil.
        AgentjailRun.Outcome o = run.bash("""
                export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a
                git checkout -q -b side && echo side > a.txt && git commit -qam side
                git checkout -q main && echo main > a.txt && git commit -qam main
                printf '#!/bin/sh\\ntouch %1$s-strategy\\nexit 1\\n' > evil && chmod +x evil && mkdir git-merge-x
                git rebase -q -s x/../evil side >/dev/null 2>&1; echo "rebase=$?"
                [ -d .git/rebase-merge ] || [ -d .git/rebase-apply ]; echo "in_progress=$?"
                """.formatted(planted));

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("0", o.probe("in_progress"), "the rebase stopped in the jail: " + o.describe());
        assertAll(
                () -> assertFalse(Files.exists(p.resolve(".git/rebase-merge"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertFalse(Files.exists(p.resolve(".git/rebase-apply"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertTrue(o.err().contains("an operation in progress the agent left"), o::describe));
        Command.run(
                Duration.ofSeconds(30),
                List.of("git", "-C", p.toString(), "rebase", "--continue"),
                Map.of("PATH", AgentjailRun.STANDARD_PATH, "HOME", p.toString()),
                p);
        assertFalse(Files.exists(Path.of(planted + "-strategy")), "the agent's merge strategy ran on the host");

        // Restored on purpose, it is the user's: the rebase can be aborted (or continued) from the host.
        String id = o.only(AuditRecord.KIND_SESSION_END).path("session").asText();
        String state = Files.exists(p.resolve(".git/rebase-apply")) ? "rebase-apply" : "rebase-merge";
        Command.Result restore = run.cli("review", "--restore", id + "/project/.git/" + state);
        assertEquals(0, restore.exitCode(), restore::describe);
        hostGit(p, "rebase", "--abort");
        assertEquals("main", hostGit(p, "rev-parse", "--abbrev-ref", "HEAD"), "the rebase was the host's to abort");
    }

    @Test
    void aBareRepositoryAsTheProjectIsRefused() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        HostExecutedSurfacesTest.git(run.project(), "init", "-q", "--bare");
        run.bash("echo ran=1").assertRefused("is a bare git repository");
    }

    private static void commitOne(Path p) throws IOException {
        HostExecutedSurfacesTest.git(p, "init", "-q", "-b", "main");
        Files.writeString(p.resolve("a.txt"), "one\n");
        Files.writeString(p.resolve(".gitignore"), "ready\nchecked\n");
        HostExecutedSurfacesTest.git(p, "add", "-A");
        HostExecutedSurfacesTest.git(p, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
    }

    /** Waits (at most 60 s) for the jail to create {@code file}; fails early when the session ended without it. */
    private static void awaitFile(Path file, CompletableFuture<AgentjailRun.Outcome> session) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(file)) {
            if (session.isDone()) {
                AgentjailRun.Outcome o = session.get();
                throw new AssertionError("the session ended before " + file.getFileName() + ": " + o.describe());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + file.getFileName() + " from the jail within 60 s");
            }
            Thread.sleep(50);
        }
    }

    /** git as the user runs it on the host: their environment, no agentjail anywhere; its output, stripped. */
    private static String hostGit(Path dir, String... args) {
        List<String> argv = new ArrayList<>(List.of(
                "git",
                "-C",
                dir.toString(),
                "-c",
                "user.name=h",
                "-c",
                "user.email=h@h",
                "-c",
                "advice.detachedHead=0"));
        argv.addAll(List.of(args));
        Command.Result r = Command.run(
                Duration.ofSeconds(30), argv, Map.of("PATH", AgentjailRun.STANDARD_PATH, "HOME", dir.toString()), dir);
        Supplier<String> what = r::describe;
        assertEquals(0, r.exitCode(), what);
        return r.out().strip();
    }
}
