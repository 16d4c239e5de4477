package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.cli.ExitCodes;
import dev.agentjail.it.support.Command;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cloned repository's {@code .agentjail.yaml} cannot hand the agent a host secret: {@code agentjail run} refuses it,
 * before anything starts, until the user trusts it with {@code agentjail policy trust}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProjectTrustRunTest {
    @TempDir
    Path dir;

    @BeforeEach
    void setUp() {
        AgentjailRun.requireBwrap();
    }

    @Test
    void anUntrustedProjectPolicyStartsNothingUntilTheUserTrustsIt() throws IOException {
        AgentjailRun run = AgentjailRun.in(dir).env("PROJECT_SECRET", "s3cret-value");
        Path file = Files.writeString(
                run.project().resolve(".agentjail.yaml"), "version: 1\nenv:\n  forward: [PROJECT_SECRET]\n");
        Path project = run.project().toRealPath();

        AgentjailRun.Outcome refused = run.bash("echo ran=yes; echo \"secret=$PROJECT_SECRET\"");

        assertEquals(ExitCodes.USAGE, refused.exitCode(), refused::describe);
        assertFalse(refused.out().contains("ran=yes"), refused::describe);
        assertTrue(
                refused.err()
                        .contains(file.toRealPath() + ":3: env.forward[0]: copies the host's environment variable"
                                + " 'PROJECT_SECRET' into the jail, which widens the jail; a"
                                + " project policy needs your trust for that; review and trust it with: agentjail"
                                + " policy trust --project " + project),
                refused::describe);
        assertFalse(Files.exists(run.auditLog()), "a session started: its audit log exists");

        Command.Result trusted = Command.run(
                AgentjailRun.PROCESS_LIMIT,
                List.of(
                        AgentjailRun.java().toString(),
                        "-jar",
                        AgentjailRun.jar().toString(),
                        "policy",
                        "trust",
                        "--project",
                        project.toString()),
                run.launcherEnv(),
                project);
        assertEquals(ExitCodes.OK, trusted.exitCode(), () -> trusted.out() + trusted.stderr());
        assertTrue(trusted.out().contains("Trusted " + project), () -> trusted.out() + trusted.stderr());

        AgentjailRun.Outcome ran = run.bash("echo ran=yes; echo \"secret=$PROJECT_SECRET\"");

        assertEquals(0, ran.exitCode(), ran::describe);
        assertEquals("yes", ran.probe("ran"), ran::describe);
        assertEquals("s3cret-value", ran.probe("secret"), ran::describe);
    }
}
