package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.LineQueue;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGINT, SIGHUP and SIGTERM sent to the launcher reach the agent inside the jail (bwrap itself forwards none), so
 * the agent can clean up and choose its own exit code, which the launcher returns.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SignalForwardingTest {
    private static final Duration LINE_LIMIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void intHupAndTermReachTheAgent() throws Exception {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        // A launcher started from a non-interactive shell's background job inherits SIGINT ignored, and the JVM then
        // keeps it ignored; reset the three signals so the test does not depend on how the build was started.
        List<String> argv = new ArrayList<>(List.of("/usr/bin/env", "--default-signal=INT,HUP,TERM"));
        argv.addAll(run.argv(List.of(
                "sh",
                "-c",
                "trap 'echo got-INT' INT; trap 'echo got-HUP' HUP; trap 'echo got-TERM; exit 42' TERM;"
                        + " echo ready; while :; do sleep 0.1; done")));
        Process launcher = Command.builder(argv, run.launcherEnv())
                .directory(run.project().toFile())
                .start();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        Thread.ofPlatform().daemon().start(() -> pump(launcher.getErrorStream(), stderr));
        try {
            launcher.getOutputStream().close();
            LineQueue out = LineQueue.of(launcher.getInputStream());
            assertEquals("ready", out.next(LINE_LIMIT), () -> "stderr: " + stderr);
            for (String signal : List.of("INT", "HUP", "TERM")) {
                Command.Result kill = Command.run(
                        Duration.ofSeconds(10), List.of("kill", "-s", signal, Long.toString(launcher.pid())));
                assertEquals(0, kill.exitCode(), kill::describe);
                assertEquals(
                        "got-" + signal,
                        out.next(LINE_LIMIT),
                        () -> signal + " did not reach the agent; stderr: " + stderr);
            }
            assertTrue(launcher.waitFor(30, TimeUnit.SECONDS), () -> "the launcher did not exit; stderr: " + stderr);
            assertEquals(42, launcher.exitValue(), () -> "the agent's exit code after SIGTERM; stderr: " + stderr);
            AgentjailRun.collectLeftoverCgroup(run.auditLog());
        } finally {
            if (launcher.isAlive()) {
                launcher.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                fail("the launcher was still running; stderr: " + stderr.toString(StandardCharsets.UTF_8));
            }
        }
    }

    private static void pump(InputStream in, ByteArrayOutputStream sink) {
        try (in) {
            in.transferTo(sink);
        } catch (IOException e) {
            // The process is gone; what was read is kept.
        }
    }
}
