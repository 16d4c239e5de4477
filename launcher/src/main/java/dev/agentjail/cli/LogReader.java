package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Reads an audit log (JSON Lines, schema v1) as {@link LogRecord}s, one complete line at a time.
 *
 * <p>A line that is not strict JSON, not valid UTF-8, longer than {@value #MAX_LINE_BYTES} bytes, or not a v1 record
 * is a {@link Problem} with its file and line number; the {@link OnProblem} policy decides whether it is skipped (the
 * default of the log commands, as docs/audit-log.md asks of readers: a torn line can follow a disk failure) or stops
 * the command ({@code --strict}). A last line without its newline is left unread by {@link #next()}, since a writer
 * may still be appending it; {@link #finish()} reports it once the caller knows the file is complete.
 *
 * <pre>{@code
 * LogReader.forEach(files, LogReader.warnAndSkip(err), record -> { ... });
 * }</pre>
 */
final class LogReader implements Closeable {
    /** Longer lines are skipped whole: no valid record comes near this, and it bounds the memory a line can take. */
    static final int MAX_LINE_BYTES = 1 << 20;

    private static final int BUFFER_BYTES = 64 * 1024;

    private final Path file;
    private final FileChannel channel;
    private final Object fileKey;
    private final OnProblem onProblem;
    private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES).flip();
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private byte[] pending = new byte[1024];
    private int pendingLength;
    private boolean overlong;
    private long lineNumber;
    private long position;

    private LogReader(Path file, FileChannel channel, Object fileKey, OnProblem onProblem) {
        this.file = file;
        this.channel = channel;
        this.fileKey = fileKey;
        this.onProblem = onProblem;
    }

    /** A line that is not a valid record: where it is and what is wrong with it. */
    record Problem(Path file, long line, String message) {
        @Override
        public String toString() {
            return file + ":" + line + ": " + message;
        }
    }

    /** What to do with a bad line: return to skip it, throw (a {@link CliException}) to stop reading. */
    @FunctionalInterface
    interface OnProblem {
        void accept(Problem problem);
    }

    /** Skips bad lines, naming each on {@code err} as {@code agentjail: FILE:LINE: skipped: WHY}. */
    static OnProblem warnAndSkip(PrintWriter err) {
        return p -> {
            err.println("agentjail: " + p.file() + ":" + p.line() + ": skipped: " + p.message());
            err.flush();
        };
    }

    /** Stops at the first bad line with exit code 1 ({@code --strict}). */
    static OnProblem fail() {
        return p -> {
            throw new CliException(ExitCodes.FAILURE, p + " (--strict: stopped at the first bad line)");
        };
    }

    /** Opens {@code file} for reading from its start. */
    static LogReader open(Path file, OnProblem onProblem) throws IOException {
        while (true) {
            // The key read before and after opening must agree: otherwise the name moved on (a rotation) in between
            // and the channel may hold the old file under the new file's identity.
            Object before =
                    Files.readAttributes(file, BasicFileAttributes.class).fileKey();
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
            try {
                Object after =
                        Files.readAttributes(file, BasicFileAttributes.class).fileKey();
                if (Objects.equals(before, after)) {
                    return new LogReader(file, channel, after, onProblem);
                }
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
            channel.close();
        }
    }

    /**
     * Reads every record of {@code files}, in order, into {@code action}; bad lines go to {@code onProblem}. A file
     * that cannot be opened stops with exit code 2 (as every command's missing input), one that fails while it is read
     * with exit code 1.
     */
    static void forEach(List<Path> files, OnProblem onProblem, Consumer<LogRecord> action) {
        for (Path f : files) {
            LogReader opened;
            try {
                opened = open(f, onProblem);
            } catch (IOException e) {
                throw CliException.unreadable(f, e);
            }
            try (LogReader reader = opened) {
                for (LogRecord r = reader.next(); r != null; r = reader.next()) {
                    action.accept(r);
                }
                reader.finish();
            } catch (IOException e) {
                throw new CliException(ExitCodes.FAILURE, "cannot read " + f + ": " + IoErrors.describe(f, e), e);
            }
        }
    }

    /**
     * The next record of a complete line, skipping bad lines; {@code null} when no complete line is left for now (a
     * follower calls again once the file grew).
     */
    LogRecord next() throws IOException {
        while (true) {
            while (buffer.hasRemaining()) {
                byte b = buffer.get();
                position++;
                if (b == '\n') {
                    lineNumber++;
                    LogRecord record = completeLine();
                    if (record != null) {
                        return record;
                    }
                } else {
                    append(b);
                }
            }
            buffer.clear();
            int n = channel.read(buffer);
            buffer.flip();
            if (n <= 0) {
                return null;
            }
        }
    }

    /** Reports a last line that has no newline (a torn write, or a file still being written), then forgets it. */
    void finish() {
        if (pendingLength > 0 || overlong) {
            report(
                    lineNumber + 1,
                    "incomplete last line (no newline at its end): a write was cut short or is" + " still in progress");
            pendingLength = 0;
            overlong = false;
        }
    }

    /** The line number of the record {@link #next()} returned last. */
    long line() {
        return lineNumber;
    }

    Path file() {
        return file;
    }

    /** The identity (device and inode) of the file this reader has open, to notice when the name moves on. */
    Object fileKey() {
        return fileKey;
    }

    /** How many bytes have been consumed, including a pending incomplete line. */
    long position() {
        return position;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    private void append(byte b) {
        if (overlong) {
            return;
        }
        if (pendingLength == MAX_LINE_BYTES) {
            overlong = true;
            pendingLength = 0;
            return;
        }
        if (pendingLength == pending.length) {
            pending = Arrays.copyOf(pending, Math.min(MAX_LINE_BYTES, pending.length * 2));
        }
        pending[pendingLength++] = b;
    }

    private LogRecord completeLine() {
        int length = pendingLength;
        pendingLength = 0;
        if (overlong) {
            overlong = false;
            report(lineNumber, "line longer than " + MAX_LINE_BYTES + " bytes");
            return null;
        }
        String text;
        try {
            CharBuffer chars = utf8.reset().decode(ByteBuffer.wrap(pending, 0, length));
            text = chars.toString();
        } catch (CharacterCodingException e) {
            report(lineNumber, "not valid UTF-8");
            return null;
        }
        try {
            return LogRecordJson.parseRecord(text);
        } catch (LogRecordException e) {
            report(lineNumber, e.getMessage());
            return null;
        }
    }

    private void report(long line, String message) {
        onProblem.accept(new Problem(file, line, message));
    }
}
