package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's main job, exactly as written there, from the repository's root with a fresh home: it jails the command
 * under the default policy, which lets nothing out. Whatever the launcher adds to its checks has to keep this
 * working, also when the project is agentjail's own checkout.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ReadmeMainJobTest {
    private static final String HEADING = "**Run the main job**";

    @TempDir
    Path dir;

    @Test
    void theReadmesMainJobRunsFromTheCheckoutWithAFreshHome() throws IOException {
        AgentjailRun.requireBwrap();
        Path repo = Path.of("..").toRealPath();
        String command = mainJob(Files.readString(repo.resolve("README.md")));
        assertTrue(command.startsWith("./bin/agentjail run "), command);
        Path home = Files.createDirectories(dir.resolve("home"));
        Path cache = home.resolve(".cache");

        Command.Result r = Command.run(
                Duration.ofSeconds(180),
                List.of("bash", "-c", command),
                Map.of(
                        "HOME", home.toString(),
                        "PATH", AgentjailRun.STANDARD_PATH,
                        "TMPDIR", Files.createDirectories(dir.resolve("tmp")).toString()),
                repo);

        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.out().contains("hello from the jail"), r::describe);
        assertTrue(r.out().contains("blocked, as the policy says"), r::describe);
        // bin/agentjail may have started its background work (the AOT cache, Netty's libraries) in the fresh cache.
        Await.until(
                Duration.ofSeconds(150),
                () -> !Files.exists(cache.resolve("agentjail/aot-training.lock"))
                        && !Files.exists(cache.resolve("agentjail/native-extract.lock")),
                () -> "bin/agentjail's background work in " + cache + " did not finish");
    }

    /** The one command in the fenced block under the README's "Run the main job" heading. */
    static String mainJob(String readme) {
        int heading = readme.indexOf(HEADING);
        assertTrue(heading >= 0, "no '" + HEADING + "' in README.md");
        int open = readme.indexOf("```sh\n", heading);
        int close = readme.indexOf("\n```", open + 6);
        assertTrue(open >= 0 && close > open, "no fenced block under " + HEADING);
        List<String> lines = readme.substring(open + 6, close).strip().lines().toList();
        assertEquals(1, lines.size(), () -> "the main job is one command: " + lines);
        return lines.get(0);
    }
}
