package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.cli.ExitCodes;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resource exhaustion stays inside the jail (corpus §11 case 180): a fork bomb hits the policy's process limit (a pids
 * cgroup when the launcher is root, RLIMIT_NPROC otherwise), the session ends on its own and no process survives it;
 * filling /tmp stops at the policy's tmpfs size with ENOSPC, and a file in the project stops at RLIMIT_FSIZE.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ResourceLimitsTest {
    static final int MAX_PROCESSES = 64;

    @TempDir
    Path dir;

    /**
     * The inner shell forks sleeps until a fork fails and dies; the outer shell then counts the jail's processes with a
     * glob (a builtin: it cannot fork either while the sleeps fill the limit).
     */
    static String forkBombScript(String marker) {
        return """
                sh -c 'for i in $(seq 1 200); do sleep %s & done; wait'
                echo "inner=$?"
                set -- /proc/[0-9]*
                echo "procs=$#"
                """.formatted(marker);
    }

    /** A {@code sleep} argument unique to this run, so that pgrep finds exactly its processes. */
    static String uniqueSleep() {
        return "29." + ThreadLocalRandom.current().nextInt(100_000_000, 999_999_999);
    }

    /** Fails unless the fork bomb of {@link #forkBombScript} was stopped at the limit and the session ended by itself. */
    static void assertForkBombContained(AgentjailRun.Outcome o, String marker) {
        assertNotEquals(ExitCodes.TIMEOUT, o.exitCode(), () -> "the session ran into its timeout; " + o.describe());
        assertEquals(0, o.exitCode(), o::describe);
        assertNotEquals("0", o.probe("inner"), () -> "no fork failed; " + o.describe());
        assertTrue(o.err().contains("fork"), () -> "no fork failure reported; " + o.describe());
        int procs = Integer.parseInt(o.probe("procs"));
        assertTrue(
                procs <= MAX_PROCESSES,
                () -> procs + " processes inside the jail, more than limits.processes " + MAX_PROCESSES + "; "
                        + o.describe());
        assertTrue(procs >= MAX_PROCESSES / 2, () -> "the bomb stopped early, at " + procs + " processes");
        assertTrue(o.elapsed().compareTo(Duration.ofSeconds(25)) < 0, o::describe);
        AgentjailRun.assertNoProcessWith(marker);
    }

    @Test
    void aForkBombHitsTheProcessLimitAndDiesWithTheSession() {
        AgentjailRun.requireBwrap();
        String marker = uniqueSleep();
        AgentjailRun.Outcome o = AgentjailRun.in(dir)
                .policy("""
                        version: 1
                        limits:
                          processes: %d
                        """.formatted(MAX_PROCESSES))
                .timeout("30s")
                .bash(forkBombScript(marker));

        assertForkBombContained(o, marker);
        assertFalse(o.err().contains("no pids cgroup"), o::describe);
        AgentjailRun.assertPidsCgroupRemoved(o);
    }

    @Test
    void fillingTmpFailsWithEnospcAndAProjectFileStopsAtTheFileSizeLimit() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                limits:
                  tmp_size: 8m
                  file_size: 16m
                """);
        AgentjailRun.Outcome o = run.bash("""
                echo "tmp_total_kib=$(df -k --output=size /tmp | tail -1 | tr -d ' ')"
                dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>"$PWD/tmp.err"; echo "tmp_fill=$?"
                echo "tmp_error=$(grep -o 'No space left on device' "$PWD/tmp.err")"
                echo "tmp_bytes=$(stat -c %s /tmp/fill)"
                rm -f /tmp/fill
                (dd if=/dev/zero of=big bs=1M count=32 2>/dev/null); echo "fsize=$?"
                echo "fsize_bytes=$(stat -c %s big)"
                rm -f big
                """);

        assertEquals(0, o.exitCode(), o::describe);
        long limit = 8L << 20;
        assertAll(
                () -> assertEquals(String.valueOf(limit >> 10), o.probe("tmp_total_kib"), "the size of /tmp"),
                () -> assertNotEquals("0", o.probe("tmp_fill"), "dd filling /tmp succeeded"),
                () -> assertEquals("No space left on device", o.probe("tmp_error"), o::describe),
                () -> assertTrue(Long.parseLong(o.probe("tmp_bytes")) <= limit, o::describe),
                () -> assertNotEquals("0", o.probe("fsize"), "dd past limits.file_size succeeded"),
                () -> assertEquals(String.valueOf(16L << 20), o.probe("fsize_bytes"), "the file stops at file_size"));
    }
}
