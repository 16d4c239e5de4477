package dev.agentjail.proxy.mcp.host;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The last few kilobytes a host-side server wrote to stderr, for the host's own diagnostics: it is never sent to the
 * jail (it may hold anything, tokens included), and the rest is read and discarded so the server never blocks on it.
 */
final class StderrTail {
    private final byte[] ring;
    private long written;

    StderrTail(int capacity) {
        this.ring = new byte[capacity];
    }

    /** Reads {@code in} to its end. */
    void drain(InputStream in) {
        byte[] buffer = new byte[8192];
        try {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                append(buffer, n);
            }
        } catch (IOException e) {
            // The process is gone; what was read is the tail.
        }
    }

    synchronized void append(byte[] bytes, int length) {
        for (int i = 0; i < length; i++) {
            ring[(int) (written++ % ring.length)] = bytes[i];
        }
    }

    /** The tail as text (invalid UTF-8 replaced). */
    synchronized String text() {
        int size = (int) Math.min(written, ring.length);
        byte[] out = new byte[size];
        long start = written - size;
        for (int i = 0; i < size; i++) {
            out[i] = ring[(int) ((start + i) % ring.length)];
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
