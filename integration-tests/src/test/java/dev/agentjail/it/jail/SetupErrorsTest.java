package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.cli.ExitCodes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher refuses to start rather than run a weaker jail: a malformed policy exits 2 with one {@code file:line:
 * key} line, bwrap missing from the PATH exits 3, a protected path that is a symlink refuses to start; in each case
 * the command never runs.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SetupErrorsTest {
    @TempDir
    Path dir;

    @Test
    void aMalformedPolicyExits2WithFileLineAndKeyAndStartsNothing() {
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                network:
                  alow: [upstream.test]
                """);
        Path started = run.project().resolve("started");

        AgentjailRun.Outcome o = run.run("touch", started.toString());

        assertEquals(ExitCodes.USAGE, o.exitCode(), o::describe);
        String expected = run.policyFile() + ":3: network.alow:";
        assertTrue(o.err().contains(expected), () -> "expected '" + expected + "' on stderr; " + o.describe());
        assertEquals(1, o.err().strip().lines().count(), () -> "one line on stderr; " + o.describe());
        assertFalse(Files.exists(started), "the command ran");
        assertFalse(Files.exists(run.auditLog()), "a session was recorded");
    }

    @Test
    void bwrapMissingFromThePathExits3AndStartsNothing() throws IOException {
        Path emptyBin = Files.createDirectories(dir.resolve("empty-bin"));
        AgentjailRun run = AgentjailRun.in(dir).env("PATH", emptyBin.toString());
        Path started = run.project().resolve("started");

        AgentjailRun.Outcome o = run.run("/usr/bin/touch", started.toString());

        assertEquals(ExitCodes.ENVIRONMENT, o.exitCode(), o::describe);
        assertTrue(o.err().contains("bwrap"), o::describe);
        assertFalse(Files.exists(started), "the command ran");
        assertFalse(Files.exists(run.auditLog()), "a session was recorded");
    }

    @Test
    void aSymlinkedProtectedPathRefusesToStart() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path target = Files.writeString(dir.resolve("elsewhere.json"), "{}\n");
        Files.createSymbolicLink(run.project().resolve(".mcp.json"), target);
        Path started = run.project().resolve("started");

        AgentjailRun.Outcome o = run.run("touch", started.toString());

        assertFalse(Files.exists(started), "the command ran");
        assertTrue(o.err().contains(".mcp.json"), o::describe);
        assertEquals("{}\n", Files.readString(target));
        assertEquals(List.of(".mcp.json"), names(run.project()), "the project after the refusal");
        assertTrue(
                AgentjailRun.SETUP_EXIT_CODES.contains(o.exitCode()),
                () -> "a refusal to set up the jail should exit with a documented setup code "
                        + AgentjailRun.SETUP_EXIT_CODES
                        + " (issue 3: distinct, documented codes for jail setup errors), not the generic failure code;"
                        + " " + o.describe());
    }

    private static List<String> names(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
