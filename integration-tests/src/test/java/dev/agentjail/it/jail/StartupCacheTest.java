package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With a JDK ≥ 25, {@code bin/agentjail run} starts from an AOT cache (JEP 483/514) that a detached training session
 * assembles after the first run. The JVM's cache assembly has crashed on some code shapes (lambdas held in static
 * state), which only showed as a slower start: this test runs the real script, from a copy of the layout holding the
 * script and the built jar, and checks that the cache is assembled, that nothing about it reaches the user's terminal,
 * neither while it is being written nor once it is used, and that the sessions still work. The same first run
 * extracts Netty's native libraries into the cache, so later starts load them instead of inflating them.
 */
class StartupCacheTest {
    private static final Pattern RELEASE_VERSION = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)");

    @TempDir
    Path dir;

    @Test
    void theAotCacheIsAssembledInTheBackgroundAndNothingOfItReachesTheTerminal() throws Exception {
        AgentjailRun.requireBwrap();
        Prerequisites.require("amd64".equals(System.getProperty("os.arch")), "an x86_64 machine");
        Optional<Path> jdk = jdkOfAtLeast(25);
        Prerequisites.require(jdk.isPresent(), "a JDK >= 25 under /usr/lib/jvm");
        Path script = layout();
        Path cache = dir.resolve("cache").resolve("agentjail");
        Path project = Files.createDirectories(dir.resolve("project"));

        Command.Result first = run(script, jdk.get(), project);
        // The second session starts while the first one's training is (most likely) still assembling the cache.
        Command.Result second = run(script, jdk.get(), project);
        Await.until(Duration.ofSeconds(120), () -> assembled(cache) != null, () -> "no AOT cache in " + cache);
        Await.until(Duration.ofSeconds(30), () -> !training(cache), () -> "the training directory is left");
        // Netty's native libraries, extracted once beside it (then found on java.library.path, not inflated again).
        Await.until(Duration.ofSeconds(60), () -> nativeEpoll(cache) != null, () -> "no native libraries in " + cache);
        Path aot = assembled(cache);
        Command.Result third = run(script, jdk.get(), project);

        for (Command.Result r : List.of(first, second, third)) {
            assertEquals(0, r.exitCode(), r::describe);
            assertTrue(r.out().contains("jailed-ok"), r::describe);
            assertFalse(r.stderr().contains("[aot]") || r.stderr().contains("[cds]"), r::describe);
        }
        assertTrue(Files.size(aot) > 1_000_000, aot + " is " + Files.size(aot) + " bytes");
    }

    private Command.Result run(Path script, Path jdk, Path project) {
        List<String> argv = new ArrayList<>(List.of(script.toString(), "run", "--project", project.toString()));
        argv.addAll(List.of("--audit-log", dir.resolve("audit/audit.jsonl").toString()));
        argv.addAll(List.of("--ca-dir", dir.resolve("ca").toString(), "--", "sh", "-c", "echo jailed-ok"));
        return Command.run(
                AgentjailRun.PROCESS_LIMIT,
                argv,
                Map.of(
                        "JAVA_HOME", jdk.toString(),
                        "HOME", dir.resolve("home").toString(),
                        "PATH", AgentjailRun.STANDARD_PATH,
                        "XDG_CACHE_HOME", dir.resolve("cache").toString(),
                        "XDG_STATE_HOME", dir.resolve("state").toString()),
                dir);
    }

    private Path layout() throws IOException {
        Path repo = Files.createDirectories(dir.resolve("repo"));
        Path script = Files.createDirectories(repo.resolve("bin")).resolve("agentjail");
        Files.copy(Path.of("..", "bin", "agentjail"), script);
        Files.copy(
                AgentjailRun.jar(),
                Files.createDirectories(repo.resolve("launcher/target")).resolve("agentjail.jar"));
        Files.createDirectories(dir.resolve("home"));
        return script;
    }

    private static Path assembled(Path cache) {
        try (Stream<Path> files = Files.exists(cache) ? Files.list(cache) : Stream.empty()) {
            return files.filter(f -> f.getFileName().toString().endsWith("-c1.aot"))
                    .filter(f -> size(f) > 0)
                    .findFirst()
                    .orElse(null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path nativeEpoll(Path cache) {
        try (Stream<Path> dirs = Files.list(cache)) {
            return dirs.filter(d -> d.getFileName().toString().matches("native-[0-9]+-[0-9]+"))
                    .map(d -> d.resolve("libnetty_transport_native_epoll_x86_64.so"))
                    .filter(f -> size(f) > 0)
                    .findFirst()
                    .orElse(null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean training(Path cache) {
        try (Stream<Path> files = Files.list(cache)) {
            return files.anyMatch(f -> f.getFileName().toString().startsWith("aot-training")
                    || f.getFileName().toString().startsWith("native-extract"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long size(Path f) {
        try {
            return Files.size(f);
        } catch (IOException e) {
            return 0;
        }
    }

    private static Optional<Path> jdkOfAtLeast(int major) throws IOException {
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.filter(h -> Files.isExecutable(h.resolve("bin/javac")))
                    .filter(h -> version(h) >= major)
                    .findFirst();
        }
    }

    private static int version(Path home) {
        try {
            Matcher m = RELEASE_VERSION.matcher(Files.readString(home.resolve("release")));
            return m.find() ? Integer.parseInt(m.group(1)) : 0;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
