package dev.agentjail.it.support;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs an external program from an argv list (never a shell string) with a time bound and captures its output. */
public final class Command {
    /** Proxy settings inherited from the developer's shell would send the test's traffic elsewhere. */
    private static final List<String> PROXY_ENV = List.of(
            "http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY");

    private Command() {}

    /** The outcome of a finished program. */
    public record Result(int exitCode, byte[] stdout, String stderr) {
        public String out() {
            return new String(stdout, StandardCharsets.UTF_8);
        }

        /** For assertion messages. */
        public String describe() {
            return "exit " + exitCode + ", stdout: " + abbreviate(out()) + ", stderr: " + abbreviate(stderr);
        }

        private static String abbreviate(String s) {
            return s.length() > 2000 ? s.substring(0, 2000) + "…" : s;
        }
    }

    public static Result run(Duration limit, List<String> argv) {
        return run(limit, argv, Map.of(), null);
    }

    /**
     * Runs {@code argv} with the proxy variables removed from the environment and {@code env} added, waits at most
     * {@code limit} (the process is killed and the test fails after that) and returns its output.
     */
    public static Result run(Duration limit, List<String> argv, Map<String, String> env, Path workDir) {
        ProcessBuilder pb = builder(argv, env);
        if (workDir != null) {
            pb.directory(workDir.toFile());
        }
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + argv.get(0), e);
        }
        try {
            // Nothing is ever written to stdin: closing it means no program can wait on it.
            p.getOutputStream().close();
        } catch (IOException e) {
            // Already closed.
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread outPump = pump(p.getInputStream(), out);
        Thread errPump = pump(p.getErrorStream(), err);
        try {
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                outPump.join(1000);
                errPump.join(1000);
                fail(argv + " did not finish within " + limit + "; stderr: " + err.toString(StandardCharsets.UTF_8));
            }
            outPump.join(5000);
            errPump.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            fail("interrupted while running " + argv);
        }
        return new Result(p.exitValue(), out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    /** A builder for {@code argv} with the proxy variables removed and {@code env} added. */
    public static ProcessBuilder builder(List<String> argv, Map<String, String> env) {
        ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(argv));
        PROXY_ENV.forEach(pb.environment()::remove);
        pb.environment().putAll(env);
        return pb;
    }

    private static Thread pump(InputStream in, ByteArrayOutputStream sink) {
        return Thread.ofPlatform().daemon().start(() -> {
            try (in) {
                in.transferTo(sink);
            } catch (IOException e) {
                // The process was killed; what was read so far is kept.
            }
        });
    }
}
