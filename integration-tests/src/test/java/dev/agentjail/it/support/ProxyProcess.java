package dev.agentjail.it.support;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code agentjail} CLI in its own JVM, started from the test classpath with this JVM's java binary, so the
 * tests need no shaded jar and a {@code kill -9} hits a real, separate process.
 */
public final class ProxyProcess implements AutoCloseable {
    public static final String MAIN_CLASS = "dev.agentjail.cli.Main";

    private static final Pattern LISTENING =
            Pattern.compile("^agentjail proxy listening on 127\\.0\\.0\\.1:(\\d+)\\b.*");
    private static final Duration START_LIMIT = Duration.ofSeconds(30);

    private final Process process;
    private final String banner;
    private final int port;
    private final ByteArrayOutputStream stderr;

    private ProxyProcess(Process process, String banner, int port, ByteArrayOutputStream stderr) {
        this.process = process;
        this.banner = banner;
        this.port = port;
        this.stderr = stderr;
    }

    /** The argv that runs {@code agentjail ARGS…} in a new JVM. */
    public static List<String> cliArgv(List<String> args) {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> argv = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                classpath,
                MAIN_CLASS));
        argv.addAll(args);
        return argv;
    }

    /** Runs the CLI to completion (for commands that exit by themselves) within {@code limit}. */
    public static Command.Result runCli(Duration limit, String... args) {
        return Command.run(limit, cliArgv(List.of(args)), isolatedData(), null);
    }

    /**
     * Keeps the CLI's data (its local CA) out of the real home: every test JVM shares one scratch
     * XDG_DATA_HOME.
     */
    public static Map<String, String> isolatedData() {
        return Map.of("XDG_DATA_HOME", DataHome.DIR.toString());
    }

    private static final class DataHome {
        static final Path DIR = create();

        private static Path create() {
            try {
                return java.nio.file.Files.createTempDirectory("agentjail-it-data");
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    /**
     * Starts {@code agentjail proxy --listen 127.0.0.1:0 ARGS…} and waits for the line announcing its port.
     *
     * @param args the remaining options, e.g. {@code --policy FILE --audit-log FILE}
     */
    public static ProxyProcess start(String... args) throws IOException, InterruptedException {
        List<String> cli = new ArrayList<>(List.of("proxy", "--listen", "127.0.0.1:0"));
        cli.addAll(List.of(args));
        Process process = Command.builder(cliArgv(cli), isolatedData()).start();
        process.getOutputStream().close();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        Thread.ofPlatform().daemon().start(() -> pump(process.getErrorStream(), stderr));
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> readLines(process.getInputStream(), lines));
        long deadline = System.nanoTime() + START_LIMIT.toNanos();
        while (System.nanoTime() < deadline) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                Matcher m = LISTENING.matcher(line);
                if (m.matches()) {
                    return new ProxyProcess(process, line, Integer.parseInt(m.group(1)), stderr);
                }
            } else if (!process.isAlive()) {
                fail("agentjail proxy exited with " + process.exitValue() + " before listening; stderr: "
                        + stderr.toString(StandardCharsets.UTF_8));
            }
        }
        process.destroyForcibly();
        fail("agentjail proxy did not announce its port within " + START_LIMIT + "; stderr: "
                + stderr.toString(StandardCharsets.UTF_8));
        throw new AssertionError("unreachable");
    }

    public int port() {
        return port;
    }

    /** The line the command printed when it started listening. */
    public String banner() {
        return banner;
    }

    public Process process() {
        return process;
    }

    public String stderr() {
        return stderr.toString(StandardCharsets.UTF_8);
    }

    /** Sends SIGKILL (what {@link Process#destroyForcibly()} does on Linux) and returns the exit status. */
    public int killHard() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            fail("agentjail proxy survived SIGKILL for 10 s");
        }
        return process.exitValue();
    }

    /** Kills the process if it still runs; never throws, so it can close a try-with-resources block. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void pump(InputStream in, ByteArrayOutputStream sink) {
        try (in) {
            in.transferTo(sink);
        } catch (IOException e) {
            // The process is gone.
        }
    }

    private static void readLines(InputStream in, BlockingQueue<String> lines) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            // The process is gone.
        }
    }
}
