package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.jail.InitExitCodes;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentjail run} returns the agent's own exit status: its exit code, 127 for a command that does not exist
 * (as {@code sh} and {@code env} report it), 128+N when a signal killed it; the session-end record carries the same
 * code.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ExitCodeTest {
    @TempDir
    Path dir;

    @Test
    void theAgentsExitCodePassesThrough() {
        AgentjailRun.requireBwrap();
        AgentjailRun.Outcome o = AgentjailRun.in(dir).run("sh", "-c", "echo inside; exit 7");

        assertEquals(7, o.exitCode(), o::describe);
        assertEquals("inside\n", o.out(), "stdout passes through untouched");
        JsonNode end = o.only(AuditRecord.KIND_SESSION_END);
        assertEquals(7, end.path("exit_code").asInt(), end::toString);
    }

    @Test
    void aSessionWritesOnlyItsSummaryToStderr() {
        AgentjailRun.requireBwrap();
        // Several sessions: a race at start-up (logging configured on two threads at once) shows in some runs only.
        for (int n = 0; n < 4; n++) {
            int i = n;
            AgentjailRun.Outcome o = AgentjailRun.in(dir).run("true");
            assertEquals(0, o.exitCode(), o::describe);
            // Where a default limit cannot be enforced (an unprivileged user without cgroup delegation), the first
            // session of this home says so once; later ones do not.
            List<String> lines = o.err()
                    .lines()
                    .filter(l -> i > 0 || !l.startsWith("agentjail: warning: the default limits."))
                    .toList();
            // The summary: its first line, then the programs run and files changed (SessionSummary).
            assertEquals(2, lines.size(), o::describe);
            assertTrue(lines.get(0).startsWith("agentjail: session "), o::describe);
            assertTrue(lines.get(1).matches("agentjail: {3}ran \\d+ programs?, changed \\d+ files?"), o::describe);
        }
    }

    @Test
    void optionsAfterTheCommandAreTheCommands() {
        AgentjailRun.requireBwrap();
        // Without "--", as `agentjail run claude --resume` is typed: --port and "--" belong to sh, not to agentjail.
        AgentjailRun.Outcome o = AgentjailRun.in(dir)
                .withoutSeparator()
                .run("sh", "-c", "printf '%s,' \"$@\"", "sh", "--port", "9", "--", "x");

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("--port,9,--,x,", o.out(), o::describe);
    }

    @Test
    void aMissingCommandExits127() {
        AgentjailRun.requireBwrap();
        AgentjailRun.Outcome o = AgentjailRun.in(dir).run("agentjail-it-no-such-command", "arg");

        assertEquals(InitExitCodes.NOT_FOUND, o.exitCode(), o::describe);
        assertTrue(o.err().contains("agentjail-it-no-such-command"), o::describe);
        assertEquals(
                InitExitCodes.NOT_FOUND,
                o.only(AuditRecord.KIND_SESSION_END).path("exit_code").asInt());
    }

    @Test
    void anAgentKilledByASignalExits128PlusTheSignal() {
        AgentjailRun.requireBwrap();
        AgentjailRun.Outcome o = AgentjailRun.in(dir).run("sh", "-c", "kill -TERM $$; sleep 5");

        assertEquals(128 + 15, o.exitCode(), o::describe);
    }

    @Test
    void whatTheAgentLeftRunningEndsWithItAndHoldsNothingOpen() {
        AgentjailRun.requireBwrap();
        String marker = "agentjail-it-leftover-" + ProcessHandle.current().pid();
        // The background sleep holds stdout open: the session ends with the agent only if the jail's pid 1 ends
        // then and takes every process left with it, rather than waiting for them.
        AgentjailRun.Outcome o = AgentjailRun.in(dir)
                .run("sh", "-c", "sh -c 'exec -a " + marker + " sleep 600' & echo started=yes; exit 4");

        assertEquals(4, o.exitCode(), o::describe);
        assertEquals("yes", o.probe("started"), o::describe);
        AgentjailRun.assertNoProcessWith(marker);
    }
}
