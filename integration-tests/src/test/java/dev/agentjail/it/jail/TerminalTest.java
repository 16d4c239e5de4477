package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agents are TUIs: under a real terminal (a pseudo-terminal made by {@code script(1)}), the agent's stdin and
 * stdout are that terminal, it can read its size and switch it to raw mode, and its output comes back untouched.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TerminalTest {
    @TempDir
    Path dir;

    @Test
    void theAgentSeesTheTerminalAndCanUseIt() throws Exception {
        AgentjailRun.requireBwrap();
        Path script = Prerequisites.require(Path.of("/usr/bin/script"));
        AgentjailRun run = AgentjailRun.in(dir);
        String probe = "test -t 0 && test -t 1 && echo tty=yes; stty raw -echo && stty -raw echo && echo raw=ok;"
                + " echo size=$(stty size)";
        String launcher = run.argv(List.of("sh", "-c", probe)).stream()
                .map(TerminalTest::quote)
                .collect(Collectors.joining(" "));
        Command.Result r = Command.run(
                Duration.ofSeconds(60),
                List.of(script.toString(), "-qefc", "stty cols 120 rows 40; " + launcher, "/dev/null"),
                run.launcherEnv(),
                dir);

        assertEquals(0, r.exitCode(), r::describe);
        String out = r.out().replace("\r", "");
        assertTrue(out.contains("tty=yes"), r::describe);
        assertTrue(out.contains("raw=ok"), r::describe);
        assertTrue(out.contains("size=40 120"), r::describe);
    }

    private static String quote(String arg) {
        return "'" + arg.replace("'", "'\\''") + "'";
    }
}
