package dev.agentjail.proxy.mcp.host;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/** Splits a stream into newline-delimited lines (a trailing CR dropped, empty lines skipped), each at most a cap. */
final class LineReader {
    /** What a line that would exceed the cap turns into. */
    static final class LineTooLongException extends IOException {
        LineTooLongException(int max) {
            super("a line longer than " + max + " bytes", null);
        }
    }

    /** Receives each line. */
    interface Sink {
        void line(byte[] line);
    }

    private final InputStream in;
    private final int max;
    private final byte[] buffer = new byte[64 * 1024];
    private final ByteArrayOutputStream current = new ByteArrayOutputStream();

    LineReader(InputStream in, int max) {
        this.in = in;
        this.max = max;
    }

    /** Reads to the end of the stream; a partial last line is dropped, as it was never terminated. */
    void readAll(Sink sink) throws IOException {
        int n;
        while ((n = in.read(buffer)) >= 0) {
            int start = 0;
            for (int i = 0; i < n; i++) {
                if (buffer[i] == '\n') {
                    append(start, i - start);
                    emit(sink);
                    start = i + 1;
                }
            }
            append(start, n - start);
        }
    }

    private void append(int offset, int length) throws LineTooLongException {
        if (current.size() + length > max) {
            throw new LineTooLongException(max);
        }
        current.write(buffer, offset, length);
    }

    private void emit(Sink sink) {
        byte[] line = current.toByteArray();
        current.reset();
        int length = line.length;
        if (length > 0 && line[length - 1] == '\r') {
            length--;
        }
        if (length > 0) {
            sink.line(length == line.length ? line : Arrays.copyOf(line, length));
        }
    }
}
