package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.cli.ExitCodes;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing the agent starts outlives the session (corpus §11 case 176): {@code --timeout} ends the session with 124
 * within a few seconds and kills the agent and the daemons it started; when the agent exits by itself, its background
 * and double-forked processes die with the jail too.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SessionLifetimeTest {
    @TempDir
    Path dir;

    @Test
    void theTimeoutKillsEverythingAndExits124() {
        AgentjailRun.requireBwrap();
        String m = marker();
        AgentjailRun.Outcome o = AgentjailRun.in(dir)
                .timeout("2s")
                .run(
                        "sh",
                        "-c",
                        ("for i in $(seq 1 40); do sleep 64.%1$s & done; nohup sleep 61.%1$s >/dev/null 2>&1 &"
                                        + " setsid sleep 62.%1$s & (sleep 63.%1$s &); exec sleep 60.%1$s")
                                .formatted(m));

        assertEquals(ExitCodes.TIMEOUT, o.exitCode(), o::describe);
        // The JVM's start-up comes on top of the 2 s; 60 s would mean the sleep ran to the end.
        assertTrue(o.elapsed().compareTo(Duration.ofSeconds(15)) < 0, o::describe);
        assertTrue(o.err().contains("agentjail: session timed out after 2s; stopping the jail"), o::describe);
        AgentjailRun.assertNoProcessWith("." + m);
        JsonNode end = o.only(AuditRecord.KIND_SESSION_END);
        assertEquals(ExitCodes.TIMEOUT, end.path("exit_code").asInt(), end::toString);
    }

    @Test
    void backgroundProcessesDieWhenTheAgentExits() {
        AgentjailRun.requireBwrap();
        String m = marker();
        AgentjailRun.Outcome o = AgentjailRun.in(dir)
                .timeout("40s")
                .run(
                        "sh",
                        "-c",
                        "nohup sleep 61.%1$s & setsid sleep 62.%1$s >/dev/null & (sleep 63.%1$s &); sleep 0.5; exit 0"
                                .formatted(m));

        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(
                o.elapsed().compareTo(Duration.ofSeconds(20)) < 0,
                () -> "the session waited for its daemons; " + o.describe());
        AgentjailRun.assertNoProcessWith("." + m);
    }

    private static String marker() {
        return String.valueOf(ThreadLocalRandom.current().nextInt(100_000_000, 999_999_999));
    }
}
