package dev.agentjail.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Follows an audit log by name, as {@code tail -F} does: reads what is appended, and when the name points to a new
 * file (the writer rotated: renamed the old one and started a new one) first drains the old file, then reads the new
 * one from its start. A file truncated in place is read again from its start. Polls at a fixed interval; each poll
 * reads whatever complete lines arrived, one bounded line at a time.
 */
final class LogTailFollower {
    static final Duration POLL_INTERVAL = Duration.ofMillis(250);

    private final Path path;
    private final LogReader.OnProblem onProblem;
    private final Consumer<LogRecord> sink;
    private final Runnable flush;
    private final Pause pause;

    LogTailFollower(Path path, LogReader.OnProblem onProblem, Consumer<LogRecord> sink, Runnable flush, Pause pause) {
        this.path = path;
        this.onProblem = onProblem;
        this.sink = sink;
        this.flush = flush;
        this.pause = pause;
    }

    /** Waits between polls; injected so that tests need not wait for real. */
    @FunctionalInterface
    interface Pause {
        void pause() throws InterruptedException;

        static Pause sleeping(Duration interval) {
            return () -> Thread.sleep(interval.toMillis());
        }
    }

    /**
     * Follows from where {@code reader} stands until {@code stop} says so (checked after each poll's output is
     * flushed); closes the reader it ends with.
     */
    void run(LogReader start, BooleanSupplier stop) throws IOException, InterruptedException {
        LogReader current = start;
        try {
            while (true) {
                if (current != null) {
                    drain(current);
                }
                flush.run();
                if (stop.getAsBoolean()) {
                    return;
                }
                pause.pause();
                BasicFileAttributes attrs = attributes();
                if (attrs == null) {
                    continue; // between the rename and the new file: keep the old one
                }
                if (current == null) {
                    current = openOrNull();
                } else if (!Objects.equals(attrs.fileKey(), current.fileKey())) {
                    drain(current);
                    current.finish();
                    current.close();
                    current = openOrNull();
                } else if (attrs.size() < current.position()) {
                    current.close();
                    current = openOrNull();
                }
            }
        } finally {
            if (current != null) {
                current.close();
            }
        }
    }

    private void drain(LogReader reader) throws IOException {
        for (LogRecord r = reader.next(); r != null; r = reader.next()) {
            sink.accept(r);
        }
    }

    private LogReader openOrNull() throws IOException {
        try {
            return LogReader.open(path, onProblem);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private BasicFileAttributes attributes() throws IOException {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return null;
        }
    }
}
