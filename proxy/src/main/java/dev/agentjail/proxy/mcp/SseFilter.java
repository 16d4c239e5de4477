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
 * Filters a {@code text/event-stream} from an approved MCP server event by event, parsed as the WHATWG event-stream
 * parser the clients use parses it (a BOM at the start of the stream dropped, lines ended by CRLF, LF or CR alone, a
 * field's value after its first colon and one space), and written again from what was parsed, never as the bytes that
 * came: each complete event whose data is a JSON-RPC message is handed to a {@link Rewriter} (which keeps, rewrites or
 * drops it); events without data (comments, priming events) pass; events whose data is not a JSON-RPC message, and
 * events with a field the filter does not know ({@code data }, {@code Data}, a NUL or a later BOM in the name), are
 * dropped, except, on a legacy session stream, the {@code endpoint} event, which goes to an {@link EndpointHandler}.
 * Bytes of an event not complete yet wait, bounded by {@link #MAX_EVENT_BYTES}.
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
    /** Whether the start of the stream, where a BOM is dropped, has been passed. */
    private boolean started;

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
        if (!started) {
            boolean bom = len >= 3 && (buf[0] & 0xff) == 0xef && (buf[1] & 0xff) == 0xbb && (buf[2] & 0xff) == 0xbf;
            if (!bom && !last && len < 3 && bomPrefix(buf, len)) {
                return new byte[0]; // Could still be a BOM.
            }
            started = true;
            if (bom) {
                // TextDecoder (the TypeScript SDK's reading) drops it; the first line is then a field like any other.
                System.arraycopy(buf, 3, buf, 0, len - 3);
                len -= 3;
            }
        }
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

    private static boolean bomPrefix(byte[] buf, int len) {
        int[] bom = {0xef, 0xbb, 0xbf};
        for (int i = 0; i < len; i++) {
            if ((buf[i] & 0xff) != bom[i]) {
                return false;
            }
        }
        return true;
    }

    /** Parses one event ({@code buf[start, end)}, its blank line included) and writes what it becomes to {@code out}. */
    private void emit(byte[] buf, int start, int end, ByteArrayOutputStream out) throws StreamException {
        List<String> comments = new ArrayList<>();
        StringBuilder data = null;
        String type = null;
        String id = null;
        String retry = null;
        boolean known = true;
        String text = new String(buf, start, end - start, StandardCharsets.UTF_8);
        for (String line : text.split("\r\n|\r|\n")) {
            if (line.isEmpty()) {
                continue;
            }
            if (line.charAt(0) == ':') {
                comments.add(line);
                continue;
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            switch (field) {
                case "data" ->
                    data = data == null
                            ? new StringBuilder(value)
                            : data.append('\n').append(value);
                case "event" -> type = value;
                // As the WHATWG parser: an id with a NUL and a retry that is not digits are ignored.
                case "id" -> id = value.indexOf('\0') < 0 ? value : id;
                case "retry" ->
                    retry = !value.isEmpty() && value.chars().allMatch(c -> c >= '0' && c <= '9') ? value : retry;
                default -> known = false;
            }
        }
        if (!known) {
            // A field some client might read otherwise than the filter (or not at all): nothing of the event passes.
            dropped++;
            return;
        }
        StringBuilder event = new StringBuilder();
        for (String comment : comments) {
            event.append(comment).append('\n');
        }
        if (id != null) {
            event.append("id: ").append(id).append('\n');
        }
        if (type != null) {
            event.append("event: ").append(type).append('\n');
        }
        if (retry != null) {
            event.append("retry: ").append(retry).append('\n');
        }
        if (endpoints != null && "endpoint".equals(type)) {
            String uri = data == null ? "" : data.toString();
            endpoints.endpoint(uri);
            write(event.append("data: ").append(uri).append("\n\n"), out);
            return;
        }
        if (data == null || data.isEmpty()) {
            // Comments, an id or retry alone, a priming event with empty data: no message in it.
            if (data != null) {
                event.append("data:\n");
            }
            if (!event.isEmpty()) {
                write(event.append('\n'), out);
            }
            return;
        }
        byte[] json = data.toString().getBytes(StandardCharsets.UTF_8);
        Json.Obj passed;
        try {
            passed = rewriter.rewrite(RpcMessage.of(JsonReader.parse(json)));
        } catch (JsonException | RpcMessage.InvalidMessage e) {
            passed = null;
        }
        if (passed == null) {
            dropped++;
            return;
        }
        write(event.append("data: ").append(passed.text()).append("\n\n"), out);
    }

    private static void write(StringBuilder event, ByteArrayOutputStream out) {
        out.writeBytes(event.toString().getBytes(StandardCharsets.UTF_8));
    }
}
