package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Test support for the log commands: runs the real entry point with stdout and stderr captured, finds the test logs,
 * and compares output with golden files ({@code -Dagentjail.golden.update=true} rewrites them from the actual output;
 * review the diff before keeping it).
 */
final class LogReaderTestCli {
    static final String GOLDEN_DIR = "src/test/resources/dev/agentjail/cli/log/";

    private LogReaderTestCli() {}

    /** The outcome of one {@code agentjail} run. */
    record Run(int exitCode, String out, String err) {}

    /** Runs {@code agentjail ARGS}; picocli writes to System.out/err, swapped here for the duration. */
    static synchronized Run run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.execute(args);
            System.out.flush();
            System.err.flush();
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    /** A file under the test resources' {@code dev/agentjail/cli/log/}. */
    static Path resource(String name) {
        URL url = LogReaderTestCli.class.getResource("log/" + name);
        if (url == null) {
            throw new IllegalStateException("no test resource log/" + name);
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Fails unless {@code actual} equals the golden file {@code name} (or rewrites the file, see the class comment). */
    static void assertGolden(String name, String actual) {
        if (Boolean.getBoolean("agentjail.golden.update")) {
            try {
                Files.writeString(Path.of(GOLDEN_DIR + name), actual);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return;
        }
        String expected;
        try {
            expected = Files.readString(resource(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertEquals(expected, actual, "differs from the golden file " + GOLDEN_DIR + name);
    }
}
