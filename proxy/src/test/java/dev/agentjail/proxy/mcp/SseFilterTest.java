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
        String expected = ": keep-alive\n\n"
                + "id: 1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n"
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
}
