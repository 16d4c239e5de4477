package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tail scan finds MCP past the start of a body exactly where the whole-body scan of the top level does, however
 * the body is cut into pieces, in every reading; and finds nothing where a receiver reads no JSON-RPC message.
 */
class McpTailTest {
    private static final String PAD = "p".repeat(McpDetection.SNIFF_BYTES + 100);

    static Stream<Arguments> bodies() {
        return Stream.of(
                Arguments.of("jsonrpc after padding", "{\"pad\":\"" + PAD + "\",\"jsonrpc\":\"2.0\"}", true),
                Arguments.of("method after padding", "{\"pad\":\"" + PAD + "\",\"method\":\"tools/call\"}", true),
                Arguments.of(
                        "duplicate method, the later one MCP",
                        "{\"method\":\"eth_call\",\"pad\":\"" + PAD + "\",\"method\":\"tools/call\"}",
                        true),
                Arguments.of("escaped key", "{\"pad\":\"" + PAD + "\",\"\\u006asonrpc\":\"2.0\"}", true),
                Arguments.of(
                        "escaped method value", "{\"pad\":\"" + PAD + "\",\"method\":\"tools\\/c\\u0061ll\"}", true),
                Arguments.of(
                        "padding nested deeper",
                        "{\"a\":{\"b\":[\"" + PAD + "\"]},\"method\" :  \"resources/read\"}",
                        true),
                Arguments.of(
                        "later message of a batch",
                        "[{\"x\":\"" + PAD + "\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}]",
                        true),
                Arguments.of(
                        "white space around the colon", "{\"pad\":\"" + PAD + "\" , \"jsonrpc\"\r\n\t:\"2.0\"}", true),
                Arguments.of(
                        "quotes escaped in the padding",
                        "{\"pad\":\"" + PAD + "\\\"jsonrpc\\\":1\",\"model\":\"m\"}",
                        false),
                Arguments.of(
                        "names nested in a tool schema",
                        "{\"model\":\"m\",\"pad\":\"" + PAD + "\",\"tools\":[{\"input_schema\":{\"properties\":"
                                + "{\"jsonrpc\":{\"type\":\"string\"},\"method\":\"tools/call\"}}}]}",
                        false),
                Arguments.of("a method that is not MCP", "{\"pad\":\"" + PAD + "\",\"method\":\"eth_call\"}", false),
                Arguments.of("a value named jsonrpc", "{\"pad\":\"" + PAD + "\",\"x\":\"jsonrpc\"}", false),
                Arguments.of("a long key", "{\"pad\":\"" + PAD + "\",\"" + PAD + "jsonrpc\":1}", false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bodies")
    void agreesWithTheWholeBodyScanInEveryCut(String name, String text, boolean mcp) {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        assertEquals(mcp, McpDetection.namesMcp(body, 0, body.length, true), "whole-body scan");
        Random random = new Random(name.hashCode());
        for (int round = 0; round < 4; round++) {
            assertEquals(mcp, tailFinds(body, StandardCharsets.UTF_8, random, round == 0), name + " round " + round);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bodies")
    void readsUtf16AndUtf32Too(String name, String text, boolean mcp) {
        for (Charset charset :
                List.of(StandardCharsets.UTF_16LE, StandardCharsets.UTF_16BE, Charset.forName("UTF-32LE"))) {
            byte[] body = text.getBytes(charset);
            McpDetection d = new McpDetection(null, "application/json");
            McpTail tail = d.tail(body, McpDetection.SNIFF_BYTES);
            assertNotNull(tail, charset.name());
            feedInPieces(tail, body, McpDetection.SNIFF_BYTES, new Random(7), false);
            assertEquals(mcp, tail.found() != null, name + " in " + charset);
        }
    }

    @Test
    void theDeclaredCharsetIsOneMoreReading() {
        String text = "{\"pad\":\"" + PAD + "\",\"jsonrpc\":\"2.0\"}";
        // UTF-16BE without a BOM, declared: detection of the bytes also reads it, the declared reading names itself.
        byte[] body = text.getBytes(StandardCharsets.UTF_16BE);
        McpTail tail = new McpDetection(null, "application/json; charset=utf-16be").tail(body, 4096);
        feedInPieces(tail, body, 4096, new Random(3), false);
        assertNotNull(tail.found());
    }

    @Test
    void eventStreamsAreReadEventByEvent() {
        String start = "event: message\ndata: {\"pad\":\"" + PAD + "\"}\n\n";
        for (String later : List.of(
                "data: {\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"}\n\n",
                "data:{\"method\":\r\ndata: \"tools/call\"}\r\n\r\n",
                "id: 1\rdata: [{\"jsonrpc\":1}]")) {
            byte[] body = (start + later).getBytes(StandardCharsets.UTF_8);
            McpTail tail = new McpDetection(null, "text/event-stream").tail(body, McpDetection.SNIFF_BYTES);
            assertNotNull(tail);
            feedInPieces(tail, body, McpDetection.SNIFF_BYTES, new Random(5), true);
            assertNotNull(tail.found(), later);
        }
        byte[] quiet = (start + "event: ping\ndata: {\"x\":{\"jsonrpc\":1}}\n\ndatabase: {\"jsonrpc\":1}\n\n")
                .getBytes(StandardCharsets.UTF_8);
        McpTail tail = new McpDetection(null, "text/event-stream").tail(quiet, McpDetection.SNIFF_BYTES);
        feedInPieces(tail, quiet, McpDetection.SNIFF_BYTES, new Random(5), false);
        assertNull(tail.found());
    }

    @Test
    void aStartThatCannotBeJsonHasNoTail() {
        byte[] body = ("model=x&pad=" + PAD).getBytes(StandardCharsets.UTF_8);
        assertNull(new McpDetection(null, "application/x-www-form-urlencoded").tail(body, body.length));
    }

    private static boolean tailFinds(byte[] body, Charset charset, Random random, boolean byteByByte) {
        int start = McpDetection.SNIFF_BYTES;
        McpTail tail = new McpDetection(null, "application/json").tail(body, start);
        if (tail == null) {
            return false;
        }
        feedInPieces(tail, body, start, random, byteByByte);
        return tail.found() != null;
    }

    private static void feedInPieces(McpTail tail, byte[] body, int from, Random random, boolean byteByByte) {
        int i = from;
        while (i < body.length) {
            int n = byteByByte ? 1 : 1 + random.nextInt(3000);
            n = Math.min(n, body.length - i);
            tail.feed(body, i, n);
            i += n;
        }
    }
}
