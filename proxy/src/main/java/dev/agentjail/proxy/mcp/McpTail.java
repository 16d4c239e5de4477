package dev.agentjail.proxy.mcp;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.Charset;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Follows a body to a destination that is not an approved MCP endpoint past the start that {@link McpDetection}
 * held, to its end: a body whose start was JSON or an event stream but named no MCP member in it may still name one
 * later ({@code {"padding":"…64 KiB…","jsonrpc":"2.0","method":"tools/call",…}}). Each reading the start was held in
 * (the charset a JSON parser detects, each declared one) goes on from where the start left it, as a streaming scan of
 * the top-level members of the JSON text, or of each event's data: a member {@code jsonrpc}, or a member {@code
 * method} whose value is an MCP method, at the top level or in an object of a top-level array, is MCP. Nothing is
 * held: the gate keeps back the last part of the body until the scan has seen the end.
 */
final class McpTail {
    private final List<Reading> readings;
    private String found;

    private McpTail(List<Reading> readings) {
        this.readings = readings;
    }

    /**
     * The tail scan of a body whose start is {@code start[0, length)}, in the readings {@code charsets} (the first
     * one detected, with {@code bomLength} bytes of byte order mark), or null when no reading of the start is JSON or
     * an event stream (a parser stops at its first byte).
     */
    static McpTail of(
            byte[] start, int length, List<Charset> charsets, int bomLength, List<String> names, boolean eventStream) {
        List<Reading> readings = new ArrayList<>();
        for (int i = 0; i < charsets.size(); i++) {
            Reading r = new Reading(charsets.get(i), names.get(i), i == 0 ? bomLength : 0, eventStream);
            r.feed(start, 0, length);
            if (!r.dead()) {
                readings.add(r);
            }
        }
        McpTail tail = new McpTail(readings);
        tail.check();
        return readings.isEmpty() ? null : tail;
    }

    /** Reads the next bytes of the body. */
    void feed(byte[] b, int off, int len) {
        if (found != null) {
            return;
        }
        for (Reading r : readings) {
            r.feed(b, off, len);
        }
        check();
    }

    private void check() {
        for (Reading r : readings) {
            if (r.mcp()) {
                found = r.name;
                return;
            }
        }
    }

    /** The name of the reading in which the body is MCP, or null. */
    String found() {
        return found;
    }

    /** One reading of the body: its bytes as text in one charset, scanned as JSON or as an event stream. */
    private static final class Reading {
        final String name;
        private final CharsetDecoder decoder;
        private int skip;
        private ByteBuffer pending = ByteBuffer.allocate(0);
        /** The body's shape, once its first character that is not white space is seen. */
        private Boolean sse;

        private final JsonNames json = new JsonNames();
        private final SseNames events = new SseNames();
        private final byte[] prefix = new byte[8];
        private int prefixLength;

        /** Typed as an event stream: any start that is not JSON is events. */
        private final boolean eventStream;

        Reading(Charset charset, String name, int bomLength, boolean eventStream) {
            this.name = name;
            this.eventStream = eventStream;
            this.decoder = charset.equals(StandardCharsets.UTF_8)
                    ? null
                    : charset.newDecoder()
                            .onMalformedInput(CodingErrorAction.REPLACE)
                            .onUnmappableCharacter(CodingErrorAction.REPLACE);
            this.skip = bomLength;
        }

        boolean dead() {
            return sse == null ? false : sse ? events.dead() : json.dead();
        }

        boolean mcp() {
            return sse != null && (sse ? events.found() : json.found());
        }

        void feed(byte[] b, int off, int len) {
            int s = Math.min(skip, len);
            skip -= s;
            off += s;
            len -= s;
            if (decoder == null) {
                text(b, off, len);
                return;
            }
            ByteBuffer in = ByteBuffer.allocate(pending.remaining() + len);
            in.put(pending).put(b, off, len).flip();
            CharBuffer chars = CharBuffer.allocate(len + 8);
            decoder.decode(in, chars, false);
            pending = in.slice();
            chars.flip();
            ByteBuffer utf8 = StandardCharsets.UTF_8.encode(chars);
            text(utf8.array(), utf8.arrayOffset() + utf8.position(), utf8.remaining());
        }

        /** UTF-8 text of the body, in order. */
        private void text(byte[] u, int off, int len) {
            int i = off;
            int end = off + len;
            if (sse == null) {
                // The first bytes decide the shape, after a UTF-8 byte order mark and white space, as detection does.
                while (i < end && sse == null) {
                    byte c = u[i];
                    if (prefixLength == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
                        i++;
                        continue;
                    }
                    if (prefixLength < prefix.length) {
                        prefix[prefixLength++] = c;
                    }
                    i++;
                    decideShape();
                }
                if (sse == null) {
                    return;
                }
                // What decided the shape is the start of the text.
                if (sse) {
                    events.feed(prefix, 0, prefixLength);
                } else {
                    json.feed(prefix, 0, prefixLength);
                }
            }
            if (sse) {
                events.feed(u, i, end - i);
            } else {
                json.feed(u, i, end - i);
            }
        }

        private void decideShape() {
            int from = 0;
            if (prefixLength >= 3
                    && (prefix[0] & 0xff) == 0xef
                    && (prefix[1] & 0xff) == 0xbb
                    && (prefix[2] & 0xff) == 0xbf) {
                from = 3;
            } else if (prefixLength < 3 && (prefix[0] & 0xff) == 0xef) {
                return;
            }
            if (from == 3) {
                System.arraycopy(prefix, 3, prefix, 0, prefixLength - 3);
                prefixLength -= 3;
                if (prefixLength == 0) {
                    return;
                }
            }
            byte c = prefix[0];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                System.arraycopy(prefix, 1, prefix, 0, --prefixLength);
                return;
            }
            if (c == '{' || c == '[') {
                sse = false;
                return;
            }
            int match = eventStream ? 1 : SseNames.fieldStart(prefix, prefixLength);
            if (match > 0) {
                sse = true;
            } else if (match < 0) {
                sse = false;
                json.kill();
            }
        }
    }
}
