package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentjail.proxy.json.Json;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SseFilterTest {
    /** Drops sampling requests and renames nothing else: enough to see event boundaries and rewriting. */
    private static SseFilter filter() {
        return new SseFilter(m -> {
            if ("sampling/createMessage".equals(m.method())) {
                return null;
            }
            if (m.kind() == RpcMessage.Kind.RESPONSE) {
                return m.raw().with("result", new Json.Str("rewritten"));
            }
            return m.raw();
        });
    }

    private static String feedInPieces(SseFilter f, String stream, int piece) throws Exception {
        byte[] all = stream.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < all.length; i += piece) {
            int n = Math.min(piece, all.length - i);
            out.writeBytes(f.feed(all, i, n, i + n == all.length));
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void passesRewritesAndDropsEventByEventWhateverTheChunking() throws Exception {
        String stream = ": keep-alive\n\n"
                + "id: 1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n"
                + "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\"}\n\n"
                + "id: 2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n"
                + "data: \"result\":{}}\n\n"
                + "data: not json\n\n"
                + "data: {\"unfinished\":";
        // Written again from what was parsed: one line end, one data line.
        String expected = ": keep-alive\n\n"
                + "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
                + "id: 2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"rewritten\"}\n\n";
        for (int piece : new int[] {1, 2, 3, 7, 64, 100_000}) {
            SseFilter f = filter();
            assertEquals(expected, feedInPieces(f, stream, piece), "pieces of " + piece);
            assertEquals(2, f.dropped());
        }
    }

    @Test
    void anEndpointEventGoesToItsHandlerOnlyOnALegacyStream() throws Exception {
        String stream = "event: endpoint\ndata: /messages?sessionId=1\n\n"
                + "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n";
        java.util.List<String> seen = new java.util.ArrayList<>();
        SseFilter legacy = new SseFilter(RpcMessage::raw, seen::add);
        assertEquals(stream, feedInPieces(legacy, stream, 5));
        assertEquals(java.util.List.of("/messages?sessionId=1"), seen);

        // Anywhere else its data is not JSON-RPC: dropped.
        SseFilter plain = new SseFilter(RpcMessage::raw);
        assertEquals(stream.substring(stream.indexOf("event: message")), feedInPieces(plain, stream, 5));
        assertEquals(1, plain.dropped());
    }

    @Test
    void aRefusedEndpointFailsTheStreamAndNothingOfItPasses() {
        SseFilter f = new SseFilter(RpcMessage::raw, uri -> {
            throw new SseFilter.StreamException("refused " + uri);
        });
        byte[] bytes = "event:endpoint\ndata:http://evil.test/m\n\n".getBytes(StandardCharsets.UTF_8);
        SseFilter.StreamException e =
                assertThrows(SseFilter.StreamException.class, () -> f.feed(bytes, 0, bytes.length, false));
        assertEquals("refused http://evil.test/m", e.getMessage());
    }

    @Test
    void anEventPastTheBoundFailsTheStream() {
        SseFilter f = filter();
        byte[] big = ("data: " + "x".repeat(SseFilter.MAX_EVENT_BYTES)).getBytes(StandardCharsets.UTF_8);
        assertThrows(SseFilter.StreamException.class, () -> f.feed(big, 0, big.length, false));
    }

    private static final String EVIL =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"delete_repo\"}]}}";
    private static final String CLEAN = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"rewritten\"}";

    /**
     * Streams whose lines start or end oddly: a BOM at the start (which TextDecoder strips), CR-only line ends, field
     * names with spaces or NULs, {@code data} without a colon. What the filter passes is what it parsed: the message
     * rewritten, or nothing.
     */
    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> oddStreams() {
        return java.util.stream.Stream.of(
                odd("BOM, then data", "\uFEFFdata: " + EVIL + "\n\n", "data: " + CLEAN + "\n\n"),
                odd(
                        "BOM, then event and data",
                        "\uFEFFevent: message\ndata: " + EVIL + "\n\n",
                        "event: message\ndata: " + CLEAN + "\n\n"),
                odd("BOM, then a comment", "\uFEFF: hi\n\ndata: " + EVIL + "\n\n", ": hi\n\ndata: " + CLEAN + "\n\n"),
                odd("two BOMs", "\uFEFF\uFEFFdata: " + EVIL + "\n\n", ""),
                odd("a BOM later on", ": a\n\n\uFEFFdata: " + EVIL + "\n\n", ": a\n\n"),
                odd(
                        "CR line ends",
                        "event: message\rdata: " + EVIL + "\r\r",
                        "event: message\ndata: " + CLEAN + "\n\n"),
                odd("CRLF line ends", "id: 7\r\ndata: " + EVIL + "\r\n\r\n", "id: 7\ndata: " + CLEAN + "\n\n"),
                odd("field name with a trailing space", "data : " + EVIL + "\n\n", ""),
                odd("field name with a leading space", " data: " + EVIL + "\n\n", ""),
                odd("field name in capitals", "Data: " + EVIL + "\n\n", ""),
                odd("an unknown field", "foo: bar\ndata: " + EVIL + "\n\n", ""),
                odd("data without a colon", "data\ndata: " + EVIL + "\n\n", "data: " + CLEAN + "\n\n"),
                odd("a NUL in the field name", "da\u0000ta: " + EVIL + "\n\n", ""),
                odd("a NUL after the JSON", "data: " + EVIL + "\u0000\n\n", ""),
                odd("a NUL in the id", "id: 1\u0000\ndata: " + EVIL + "\n\n", "data: " + CLEAN + "\n\n"),
                odd("a tab after the colon", "data:\t" + EVIL + "\n\n", "data: " + CLEAN + "\n\n"),
                odd("a bad retry", "retry: 1x\ndata: " + EVIL + "\n\n", "data: " + CLEAN + "\n\n"),
                odd("a priming event", "id: 0\nretry: 100\ndata:\n\n", "id: 0\nretry: 100\ndata:\n\n"),
                odd("blank lines only", "\n\n\r\n", ""));
    }

    private static org.junit.jupiter.params.provider.Arguments odd(String name, String stream, String expected) {
        return org.junit.jupiter.params.provider.Arguments.of(name, stream, expected);
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.MethodSource("oddStreams")
    void passesOnlyWhatItParsed(String name, String stream, String expected) throws Exception {
        for (int piece : new int[] {1, 2, 3, 5, 100_000}) {
            SseFilter f = filter();
            String out = feedInPieces(f, stream, piece);
            assertEquals(expected, out, "pieces of " + piece);
            for (boolean stripBom : new boolean[] {true, false}) {
                for (String data : ClientReading.whatwg(out, stripBom)) {
                    assertEquals(false, data.contains("delete_repo"), data);
                }
            }
            for (String data : ClientReading.javaSdk(out)) {
                assertEquals(false, data.contains("delete_repo"), data);
            }
        }
    }

    /** How clients read an event stream: the data of each event they dispatch. */
    static final class ClientReading {
        /** The WHATWG event-stream parser (the TypeScript SDK, via TextDecoder when {@code stripBom}). */
        static java.util.List<String> whatwg(String stream, boolean stripBom) {
            if (stripBom && stream.startsWith("\uFEFF")) {
                stream = stream.substring(1);
            }
            java.util.List<String> out = new java.util.ArrayList<>();
            StringBuilder data = new StringBuilder();
            for (String line : stream.split("\r\n|\r|\n", -1)) {
                if (line.isEmpty()) {
                    if (!data.isEmpty()) {
                        out.add(data.substring(0, data.length() - 1));
                    }
                    data.setLength(0);
                    continue;
                }
                int colon = line.indexOf(':');
                String field = colon < 0 ? line : line.substring(0, colon);
                String value = colon < 0 ? "" : line.substring(colon + 1);
                if (value.startsWith(" ")) {
                    value = value.substring(1);
                }
                if (field.equals("data")) {
                    data.append(value).append('\n');
                }
            }
            return out;
        }

        /** The Java SDK's reading: {@code data:} lines by prefix, trimmed. */
        static java.util.List<String> javaSdk(String stream) {
            java.util.List<String> out = new java.util.ArrayList<>();
            StringBuilder data = new StringBuilder();
            for (String line : stream.split("\r\n|\r|\n", -1)) {
                if (line.isEmpty()) {
                    if (!data.isEmpty()) {
                        out.add(data.toString());
                    }
                    data.setLength(0);
                } else if (line.startsWith("data:")) {
                    data.append(line.substring(5).trim()).append('\n');
                }
            }
            return out;
        }
    }
}
