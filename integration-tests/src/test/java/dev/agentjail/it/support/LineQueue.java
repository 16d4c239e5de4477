package dev.agentjail.it.support;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads a stream line by line on its own thread so that a test can wait for each line with a time bound and tell
 * "arrived", "stream ended" and "still waiting" apart.
 */
public final class LineQueue {
    private static final String END = new String("end of stream"); // compared by identity

    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private LineQueue() {}

    /** Starts reading {@code in} (UTF-8) on a daemon thread. */
    public static LineQueue of(InputStream in) {
        LineQueue q = new LineQueue();
        Thread.ofPlatform().daemon().name("line-reader").start(() -> q.pump(in));
        return q;
    }

    /** The next line, or {@code null} when the stream ended; fails if neither happens within {@code limit}. */
    public String next(Duration limit) throws InterruptedException {
        String line = lines.poll(limit.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            fail("no line within " + limit);
        }
        return line == END ? null : line;
    }

    private void pump(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            // Treated as the end of the stream; the test sees missing lines.
        } finally {
            lines.add(END);
        }
    }
}
