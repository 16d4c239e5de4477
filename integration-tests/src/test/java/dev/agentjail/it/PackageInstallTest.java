package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release artifacts of bin/package, installed where nothing else is: the tarball unpacked and the .deb installed
 * into a scratch root with {@code dpkg --root}, each then runs the main job ({@code agentjail run -- sh -c 'echo
 * hello'}, default policy, real bwrap) from an environment that is empty but for {@code PATH=/usr/bin:/bin} and a
 * fresh HOME: no JAVA_HOME, no JDK, Maven or gcc directory on the PATH. While the jailed command waits, the agentjail
 * process's {@code /proc/PID/exe} must be the artifact's own java: a launcher that fell back to the machine's java
 * (there is one in /usr/bin here) fails the test. The package is built once, from the jar the reactor built.
 */
class PackageInstallTest {
    private static final Duration BUILD_LIMIT = Duration.ofMinutes(5);
    private static final Duration LIMIT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;

    private static Path tarball;
    private static Path deb;

    @BeforeAll
    static void buildThePackageOnce() {
        Prerequisites.require(Path.of("/usr/bin/bwrap"));
        Prerequisites.require(Path.of("/usr/bin/dpkg-deb"));
        Prerequisites.require(Path.of("/usr/bin/dpkg"));
        Path jar = Path.of(System.getProperty("agentjail.jar")).toAbsolutePath();
        Command.Result built = Command.run(
                BUILD_LIMIT,
                List.of(
                        Path.of("..", "bin", "package").toAbsolutePath().toString(),
                        "--jar",
                        jar.toString(),
                        "--out",
                        dir.resolve("out").toString()),
                Map.of("JAVA_HOME", System.getProperty("java.home")),
                null);
        assertEquals(0, built.exitCode(), built.stderr());
        List<String> artifacts = built.stdout().length == 0
                ? List.of()
                : new String(built.stdout(), StandardCharsets.UTF_8).lines().toList();
        assertEquals(2, artifacts.size(), "bin/package printed " + artifacts);
        tarball = Path.of(artifacts.get(0));
        deb = Path.of(artifacts.get(1));
        assertTrue(tarball.getFileName().toString().endsWith(".tar.gz"), tarball.toString());
        assertTrue(deb.getFileName().toString().endsWith(".deb"), deb.toString());
    }

    @Test
    void theUnpackedTarballRunsTheMainJobOnItsOwnRuntime() throws Exception {
        Path prefix = Files.createDirectories(dir.resolve("opt"));
        Command.Result unpacked =
                Command.run(LIMIT, List.of("tar", "-C", prefix.toString(), "-xzf", tarball.toString()));
        assertEquals(0, unpacked.exitCode(), unpacked.stderr());
        String name = tarball.getFileName().toString().replaceFirst("\\.tar\\.gz$", "");
        Path installed = prefix.resolve(name);
        mainJob(installed.resolve("bin/agentjail"), installed.resolve("lib/agentjail/runtime"));
        assertVersion(installed.resolve("bin/agentjail"));
    }

    @Test
    void theDebInstalledIntoAScratchRootRunsTheMainJobAndNeedsOnlyBubblewrap() throws Exception {
        Command.Result depends = Command.run(LIMIT, List.of("dpkg-deb", "-f", deb.toString(), "Depends"));
        assertEquals("bubblewrap, libc6", new String(depends.stdout(), StandardCharsets.UTF_8).strip());

        Path root = dir.resolve("root");
        Files.createDirectories(root.resolve("var/lib/dpkg/updates"));
        Files.createDirectories(root.resolve("var/lib/dpkg/info"));
        Files.createFile(root.resolve("var/lib/dpkg/status"));
        // The scratch root's dpkg database knows no bubblewrap or libc6: the host's serve the run.
        Command.Result installed = Command.run(
                LIMIT, List.of("dpkg", "--root=" + root, "--force-depends", "--log=/dev/null", "-i", deb.toString()));
        assertEquals(0, installed.exitCode(), installed.stderr());
        assertTrue(Files.isRegularFile(root.resolve("usr/share/man/man1/agentjail-run.1.gz")));
        assertTrue(Files.isRegularFile(root.resolve("usr/share/bash-completion/completions/agentjail")));
        mainJob(root.resolve("usr/bin/agentjail"), root.resolve("usr/lib/agentjail/runtime"));
        assertVersion(root.resolve("usr/bin/agentjail"));
    }

    /**
     * Runs {@code agentjail run -- sh -c 'echo hello; read line'} from an empty environment; while the jailed shell
     * waits on its input, checks that the agentjail process runs {@code runtime}'s java, then lets it finish.
     */
    private static void mainJob(Path agentjail, Path runtime) throws Exception {
        Path home = Files.createTempDirectory(dir, "home");
        Path project = Files.createDirectories(home.resolve("project"));
        ProcessBuilder pb = new ProcessBuilder(
                agentjail.toString(), "run", "--", "sh", "-c", "echo hello; read line; echo \"bye $line\"");
        pb.environment().clear();
        pb.environment().putAll(Map.of("PATH", "/usr/bin:/bin", "HOME", home.toString()));
        pb.directory(project.toFile());
        pb.redirectError(home.resolve("stderr").toFile());
        Process p = pb.start();
        try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                OutputStream in = p.getOutputStream()) {
            assertEquals("hello", out.readLine(), () -> stderr(home));
            Path exe = Files.readSymbolicLink(Path.of("/proc", Long.toString(p.pid()), "exe"));
            assertEquals(runtime.toRealPath().resolve("bin/java"), exe, "agentjail ran on a java outside the artifact");
            in.write("now\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            assertEquals("bye now", out.readLine(), () -> stderr(home));
        }
        assertTrue(p.waitFor(LIMIT.toSeconds(), TimeUnit.SECONDS), "the session did not end");
        assertEquals(0, p.exitValue(), () -> stderr(home));
    }

    private static void assertVersion(Path agentjail) {
        Command.Result version = Command.run(LIMIT, List.of(agentjail.toString(), "--version"));
        String line = new String(version.stdout(), StandardCharsets.UTF_8).strip();
        assertEquals(0, version.exitCode(), version.stderr());
        assertTrue(line.matches("agentjail [0-9][^ ]* \\(commit [0-9a-f]{12}\\)"), line);
    }

    private static String stderr(Path home) {
        try {
            return Files.readString(home.resolve("stderr"));
        } catch (IOException e) {
            return "(no stderr: " + e + ")";
        }
    }
}
