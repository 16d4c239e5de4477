package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Test support: the launcher's entry point in a child JVM, in a directory and environment of the test's choosing (a
 * HOME of its own, a working directory such as {@code /}), optionally under bwrap to meet a real read-only file
 * system, a full disk or a process without the capabilities that let root write anywhere.
 */
final class CliProcess {
    static final Path BWRAP = Path.of("/usr/bin/bwrap");

    private final Path dir;
    private final Path output;
    private final Map<String, String> env = new LinkedHashMap<>();
    private final List<String> bwrap = new ArrayList<>();
    private int runs;

    /** The outcome of one run. */
    record Run(int exitCode, String out, String err) {
        String describe() {
            return "exit " + exitCode + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    /** Runs in {@code dir}, with a home under {@code scratch} (where the output goes too). */
    CliProcess(Path dir, Path scratch) throws IOException {
        this.dir = dir;
        this.output = Files.createDirectories(scratch.resolve("cli-output"));
        Path home = Files.createDirectories(scratch.resolve("home"));
        env.put("HOME", home.toString());
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("XDG_STATE_HOME", home.resolve(".local/state").toString());
        env.put("XDG_CONFIG_HOME", home.resolve(".config").toString());
        env.put("XDG_CACHE_HOME", home.resolve(".cache").toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
    }

    /** Skipped where there is no bwrap, except in CI (CI=true), where that fails. */
    static void requireBwrap() {
        boolean present = Files.isExecutable(BWRAP);
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(present, "bwrap at " + BWRAP + " is required in CI");
        } else {
            assumeTrue(present, "bwrap at " + BWRAP + " is missing");
        }
    }

    Path home() {
        return Path.of(env.get("HOME"));
    }

    CliProcess env(String name, String value) {
        env.put(name, value);
        return this;
    }

    /**
     * Runs under bwrap with the host's file system as it is plus {@code mounts} (bwrap's own arguments, such as {@code
     * --ro-bind DIR DIR}), as uid 1000 in a user namespace of its own: without the capabilities root has, so a
     * directory's mode bits hold for the test's own user too, root or not.
     */
    CliProcess underBwrap(String... mounts) {
        requireBwrap();
        bwrap.clear();
        bwrap.addAll(
                List.of(BWRAP.toString(), "--unshare-user", "--uid", "1000", "--gid", "1000", "--dev-bind", "/", "/"));
        bwrap.addAll(List.of(mounts));
        bwrap.add("--");
        return this;
    }

    Run run(String... args) throws IOException, InterruptedException {
        return finish(start(args), args);
    }

    Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>(bwrap);
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // As the jar's manifest says (Enable-Native-Access): Netty loads its native transport.
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        runs++;
        pb.redirectOutput(output.resolve(runs + ".out").toFile())
                .redirectError(output.resolve(runs + ".err").toFile());
        return pb.start();
    }

    /** What {@code process}, the last one started, wrote so far. */
    String errSoFar() throws IOException {
        return Files.readString(output.resolve(runs + ".err"), StandardCharsets.UTF_8);
    }

    String outSoFar() throws IOException {
        return Files.readString(output.resolve(runs + ".out"), StandardCharsets.UTF_8);
    }

    private Run finish(Process process, String... args) throws IOException, InterruptedException {
        if (!process.waitFor(90, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("agentjail " + String.join(" ", args) + " did not finish");
        }
        return new Run(process.exitValue(), outSoFar(), errSoFar());
    }
}
