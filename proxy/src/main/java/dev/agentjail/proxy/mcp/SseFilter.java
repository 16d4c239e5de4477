package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Filters a {@code text/event-stream} from an approved MCP server event by event: each complete event whose data is a
 * JSON-RPC message is handed to a {@link Rewriter} (which keeps, rewrites or drops it); events without data pass as
 * they are, and events whose data is not a JSON-RPC message are dropped, except, on a legacy session stream, the
 * {@code endpoint} event, which goes to an {@link EndpointHandler}. Bytes of an event not complete yet wait, bounded
 * by {@link #MAX_EVENT_BYTES}.
 */
final class SseFilter {
    static final int MAX_EVENT_BYTES = 4 * 1024 * 1024;

    /**
     * Decides on one JSON-RPC message of the stream: the message to pass (possibly rewritten), or null to drop it
     * (a message that is not JSON-RPC is dropped without a call).
     */
    interface Rewriter {
        Json.Obj rewrite(RpcMessage message);
    }

    /** Decides on the {@code endpoint} event of a legacy HTTP+SSE stream (its data: the message URI). */
    interface EndpointHandler {
        /** Accepts the endpoint (the event passes as it is), or throws to end the stream. */
        void endpoint(String uri) throws StreamException;
    }

    /** A stream the filter cannot follow (an event past the bound, an endpoint refused). */
    static final class StreamException extends Exception {
        StreamException(String message) {
            super(message, null, false, false);
        }
    }

    private final Rewriter rewriter;
    private final EndpointHandler endpoints;
    /** Bytes of the event not complete yet, in {@code buf[0, len)}; lines before {@code scan} are already split. */
    private byte[] buf = new byte[0];

    private int len;
    private int scan;
    private int lineStart;
    private int dropped;

    SseFilter(Rewriter rewriter) {
        this(rewriter, null);
    }

    /** {@code endpoints}: where {@code endpoint} events go; null: they are dropped like any data that is not JSON. */
    SseFilter(Rewriter rewriter, EndpointHandler endpoints) {
        this.rewriter = rewriter;
        this.endpoints = endpoints;
    }

    int dropped() {
        return dropped;
    }

    /**
     * Takes the next bytes of the stream and returns those to send on: every event completed by them, filtered. At the
     * end of the stream ({@code last}), a trailing incomplete event is dropped, as an SSE client would.
     */
    byte[] feed(byte[] data, int offset, int length, boolean last) throws StreamException {
        if (len + length > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(len + length, Math.min(buf.length * 2, MAX_EVENT_BYTES + length)));
        }
        System.arraycopy(data, offset, buf, len, length);
        len += length;
        ByteArrayOutputStream out = new ByteArrayOutputStream(length + 64);
        int eventStart = 0;
        int i = scan;
        while (i < len) {
            byte b = buf[i];
            if (b != '\n' && b != '\r') {
                i++;
                continue;
            }
            int lineEnd = i;
            if (b == '\r') {
                if (i + 1 >= len && !last) {
                    // A CR at the end may be the first half of CRLF: wait for the next byte.
                    break;
                }
                i += i + 1 < len && buf[i + 1] == '\n' ? 2 : 1;
            } else {
                i++;
            }
            if (lineEnd == lineStart) {
                // A blank line ends the event.
                emit(buf, eventStart, i, out);
                eventStart = i;
            }
            lineStart = i;
        }
        if (last) {
            len = 0;
            scan = 0;
            lineStart = 0;
            return out.toByteArray();
        }
        System.arraycopy(buf, eventStart, buf, 0, len - eventStart);
        len -= eventStart;
        scan = i - eventStart;
        lineStart -= eventStart;
        if (len > MAX_EVENT_BYTES) {
            throw new StreamException("an MCP event stream event is larger than " + MAX_EVENT_BYTES + " bytes");
        }
        return out.toByteArray();
    }

    private void emit(byte[] buf, int start, int end, ByteArrayOutputStream out) throws StreamException {
        List<String> others = new ArrayList<>();
        StringBuilder data = null;
        String type = null;
        String text = new String(buf, start, end - start, StandardCharsets.UTF_8);
        for (String line : text.split("\r\n|\r|\n")) {
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("data:") || line.equals("data")) {
                String value = line.length() <= 5 ? "" : line.substring(line.charAt(5) == ' ' ? 6 : 5);
                data = data == null
                        ? new StringBuilder(value)
                        : data.append('\n').append(value);
            } else {
                if (line.startsWith("event:")) {
                    type = line.substring(line.length() > 6 && line.charAt(6) == ' ' ? 7 : 6);
                }
                others.add(line);
            }
        }
        if (endpoints != null && "endpoint".equals(type)) {
            endpoints.endpoint(data == null ? "" : data.toString());
            out.write(buf, start, end - start);
            return;
        }
        if (data == null || data.isEmpty()) {
            out.write(buf, start, end - start);
            return;
        }
        byte[] json = data.toString().getBytes(StandardCharsets.UTF_8);
        Json.Obj passed;
        try {
            RpcMessage message = RpcMessage.of(JsonReader.parse(json));
            passed = rewriter.rewrite(message);
            if (passed == message.raw()) {
                out.write(buf, start, end - start);
                return;
            }
        } catch (JsonException | RpcMessage.InvalidMessage e) {
            passed = null;
        }
        if (passed == null) {
            dropped++;
            return;
        }
        StringBuilder event = new StringBuilder();
        for (String line : others) {
            event.append(line).append('\n');
        }
        event.append("data: ").append(passed.text()).append("\n\n");
        out.writeBytes(event.toString().getBytes(StandardCharsets.UTF_8));
    }
}
