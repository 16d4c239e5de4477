package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.it.support.Command;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * After a session, git on the host runs nothing the agent planted: a repository it made inside the project, a
 * commondir pointing git at a config of its own, a worktree config, and a config include it wrote are quarantined
 * before the user's next `git status`, named on stderr and in the session-end record, and `agentjail review
 * --restore` can put them back.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SessionReviewTest {
    @TempDir
    Path dir;

    @Test
    void gitOnTheHostRunsNothingTheAgentPlantedAndTheSessionEndRecordNamesIt() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        Path planted = dir.resolve("planted");
        HostExecutedSurfacesTest.git(p, "init", "-q");
        Files.writeString(p.resolve("a.txt"), "one\n");
        Files.createDirectories(p.resolve("src"));

        AgentjailRun.Outcome o = run.bash("""
                git init -q src/inner && printf '[core]\\n\\tfsmonitor = "touch %1$s-inner"\\n' >> src/inner/.git/config
                echo "inner=$?"
                mkdir -p elsewhere && git init -q --bare elsewhere/common \\
                  && printf '[core]\\n\\tfsmonitor = "touch %1$s-common"\\n' >> elsewhere/common/config \\
                  && echo "$PWD/elsewhere/common" > .git/commondir
                echo "commondir=$?"
                """.formatted(planted));

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("0", o.probe("inner"), o::describe),
                () -> assertEquals("0", o.probe("commondir"), o::describe));
        assertAll(
                () -> assertFalse(Files.exists(p.resolve("src/inner/.git"), LinkOption.NOFOLLOW_LINKS), o::describe),
                () -> assertFalse(Files.exists(p.resolve(".git/commondir"), LinkOption.NOFOLLOW_LINKS), o::describe),
                () -> assertTrue(o.err().contains("new nested-git " + p.resolve("src/inner/.git")), o::describe),
                () -> assertTrue(o.err().contains("agentjail review"), o::describe));

        // What the user does next on the host, in the project and in the planted subdirectory.
        hostGit(p.resolve("src/inner"), "status");
        hostGit(p, "status");
        assertFalse(Files.exists(Path.of(planted + "-inner")), "the nested repository's fsmonitor ran on the host");
        assertFalse(Files.exists(Path.of(planted + "-common")), "the planted commondir's fsmonitor ran on the host");

        JsonNode end = o.only(AuditRecord.KIND_SESSION_END);
        List<String> surfaces = new ArrayList<>();
        end.path("surfaces").forEach(s -> surfaces.add(s.asText()));
        assertTrue(
                surfaces.stream().anyMatch(s -> s.startsWith("new nested-git " + p.resolve("src/inner/.git"))),
                surfaces::toString);
        assertTrue(surfaces.stream().anyMatch(s -> s.contains(".git/commondir quarantined")), surfaces::toString);

        String session = end.path("session").asText();
        Command.Result restore = run.cli("review", "--restore", session + "/project/src/inner/.git");
        assertEquals(0, restore.exitCode(), restore::describe);
        assertTrue(Files.isDirectory(p.resolve("src/inner/.git"), LinkOption.NOFOLLOW_LINKS), restore::describe);
    }

    @Test
    void aSurfacePastTheReviewsEntryBoundIsQuarantinedAndAnUnfinishedReviewHoldsBackTheNextSession()
            throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        Path planted = dir.resolve("planted");
        HostExecutedSurfacesTest.git(p, "init", "-q");

        // More entries than the review's bound first (in name order), the nested repository after them.
        AgentjailRun.Outcome o = run.bash("""
                mkdir -p aaa && cd aaa && seq 1 205000 | xargs touch && cd ..
                git init -q zzz && printf '[core]\\n\\tfsmonitor = "touch %s"\\n' >> zzz/.git/config
                echo "planted=$?"
                """.formatted(planted));

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("0", o.probe("planted"), o::describe);
        assertAll(
                () -> assertFalse(Files.exists(p.resolve("zzz/.git"), LinkOption.NOFOLLOW_LINKS), o::describe),
                () -> assertTrue(o.err().contains("new nested-git " + p.resolve("zzz/.git")), o::describe));
        hostGit(p.resolve("zzz"), "status");
        assertFalse(Files.exists(planted), "the nested repository past the bound ran its fsmonitor on the host");

        // A review that could not finish (planted here as a sweep past its own bounds leaves it) holds back the next.
        Path pending = run.home().resolve(".local/state/agentjail/quarantine/abcdef0123456789/pending.json");
        Files.createDirectories(pending.getParent());
        Files.writeString(
                pending,
                "{\"session\":\"abcdef0123456789\",\"project\":\"" + p.toRealPath()
                        + "\",\"since\":\"" + Instant.now() + "\",\"reason\":\"the entry limit\",\"roots\":[{\"kind\":"
                        + "\"project\",\"dir\":\"" + p.toRealPath() + "\"}]}\n");
        AgentjailRun.Outcome held = run.bash("echo ran=1");
        assertEquals(2, held.exitCode(), held::describe);
        assertTrue(held.err().contains("agentjail review --finish"), held::describe);
        Command.Result finished = run.cli("review", "--finish");
        assertEquals(0, finished.exitCode(), finished::describe);
        AgentjailRun.Outcome next = run.bash("echo ran=1");
        assertEquals("1", next.probe("ran"), next::describe);
    }

    /** git as the user runs it: their environment, no agentjail anywhere. */
    private static void hostGit(Path dir, String... args) {
        List<String> argv = new ArrayList<>(List.of("git", "-C", dir.toString()));
        argv.addAll(List.of(args));
        Command.run(
                Duration.ofSeconds(30), argv, Map.of("PATH", AgentjailRun.STANDARD_PATH, "HOME", dir.toString()), dir);
    }
}
