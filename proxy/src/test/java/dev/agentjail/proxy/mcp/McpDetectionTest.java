package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bodies a receiver's parser reads as MCP are found in every encoding and framing; others are not. */
class McpDetectionTest {
    static final String CALL =
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{}}}";

    /** The encodings of a {@code tools/call} a JSON parser reads as one (docs/mcp.md, MCP anywhere else). */
    static Stream<Arguments> mcpBodies() {
        return Stream.of(
                Arguments.of("UTF-8", bytes("", CALL, "UTF-8")),
                Arguments.of("UTF-8 BOM", bytes("\uFEFF", CALL, "UTF-8")),
                Arguments.of("UTF-16LE BOM", bytes("\uFEFF", CALL, "UTF-16LE")),
                Arguments.of("UTF-16BE BOM", bytes("\uFEFF", CALL, "UTF-16BE")),
                Arguments.of("UTF-16LE", bytes("", CALL, "UTF-16LE")),
                Arguments.of("UTF-16BE", bytes("", CALL, "UTF-16BE")),
                Arguments.of("UTF-32LE", bytes("", CALL, "UTF-32LE")),
                Arguments.of("UTF-32BE BOM", bytes("\uFEFF", CALL, "UTF-32BE")),
                Arguments.of("whitespace", bytes(" \r\n\t ", CALL, "UTF-8")),
                Arguments.of("UTF-16LE whitespace", bytes("\n  ", CALL, "UTF-16LE")),
                Arguments.of("batch", bytes("", "[{\"a\":1}, " + CALL + "]", "UTF-8")),
                Arguments.of("UTF-16BE batch", bytes("", "[" + CALL + "]", "UTF-16BE")),
                Arguments.of("escaped method", bytes("", CALL.replace("tools/call", "tools\\/c\\u0061ll"), "UTF-8")),
                Arguments.of(
                        "duplicate member, escaped key",
                        bytes(
                                "",
                                "{\"json\\u0072pc\":\"2.0\",\"method\":\"ping\",\"method\":\"tools/call\",\"id\":1}",
                                "UTF-8")),
                Arguments.of(
                        "duplicate member, no jsonrpc",
                        bytes("", "{\"method\":\"x\",\"method\":\"tools/call\",\"id\":1}", "UTF-16LE")),
                Arguments.of("SSE-framed", bytes("", "event: message\ndata: " + CALL + "\n\n", "UTF-8")),
                Arguments.of(
                        "SSE-framed, CRLF, split",
                        bytes(
                                "",
                                "data:" + CALL.substring(0, 20) + "\r\ndata:" + CALL.substring(20) + "\r\n\r\n",
                                "UTF-8")),
                Arguments.of("SSE-framed UTF-16LE", bytes("", "data: " + CALL + "\n\n", "UTF-16LE")),
                Arguments.of("SSE-framed, no blank line at the end", bytes("", "data: " + CALL, "UTF-8")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mcpBodies")
    void foundInEveryReading(String name, byte[] body) {
        McpDetection d = new McpDetection(null, "text/plain");
        assertInstanceOf(McpDetection.Verdict.Mcp.class, d.decide(body, body.length, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mcpBodies")
    void foundOnTheStartOfALargeBody(String name, byte[] body) {
        byte[] large = new byte[McpDetection.SNIFF_BYTES + 10];
        System.arraycopy(body, 0, large, 0, body.length);
        McpDetection d = new McpDetection(null, null);
        assertInstanceOf(McpDetection.Verdict.Mcp.class, d.decide(large, large.length, false));
        assertEquals(McpDetection.MORE, d.decide(body, body.length, false), "held until enough is seen");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mcpBodies")
    void foundInACompressedBody(String name, byte[] body) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(body);
        }
        byte[] gzip = out.toByteArray();
        McpDetection d = new McpDetection("gzip", "application/json");
        assertEquals(McpDetection.MORE, d.decide(gzip, gzip.length, false));
        assertInstanceOf(McpDetection.Verdict.Mcp.class, d.decide(gzip, gzip.length, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("declaredCharsets")
    void foundInTheDeclaredCharset(String charset) {
        byte[] body = CALL.getBytes(Charset.forName(charset));
        McpDetection d = new McpDetection(null, "application/json; charset=" + charset);
        assertInstanceOf(McpDetection.Verdict.Mcp.class, d.decide(body, body.length, true));
    }

    static Stream<String> declaredCharsets() {
        // EBCDIC: a receiver that decodes by the declared charset (Spring's Jackson converter does) reads a call.
        return Stream.of("IBM037", "IBM500", "UTF-16", "UTF-32");
    }

    /**
     * Content-Types whose charset one receiver or another reads as EBCDIC: quoted strings that hide a ';' or a bogus
     * charset, escapes, names in any case, a charset named twice, malformed lists that lenient parsers still read.
     */
    static Stream<String> ebcdicTypes() {
        return Stream.of(
                "application/json; x=\"a;charset=bogus\"; charset=IBM037",
                "application/json; x=\"a\\\";charset=bogus\"; charset=IBM037",
                "application/json; x=\"a;charset=IBM037;\"; charset=utf-8",
                "application/json; CHARSET=\"IBM037\"",
                "application/json; charset=\"IB\\M037\"",
                "application/json; charset=bogus; charset=IBM037",
                "application/json; charset=utf-8; charset=IBM037",
                "application/json; charset=IBM037; charset=utf-8",
                "application/json; charset=\"IBM037",
                "application/json; x=\"a;charset=IBM037",
                "application/json;charset = IBM037",
                "application/json, text/plain; charset=IBM037",
                "application/json; charset=IBM037, text/plain");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ebcdicTypes")
    void foundInEveryCharsetAContentTypeCouldDeclare(String type) {
        byte[] body = CALL.getBytes(Charset.forName("IBM037"));
        McpDetection d = new McpDetection(null, type);
        McpDetection.Verdict v = d.decide(body, body.length, true);
        assertInstanceOf(McpDetection.Verdict.Mcp.class, v);
        assertEquals("declared IBM037", ((McpDetection.Verdict.Mcp) v).reading());
    }

    @org.junit.jupiter.api.Test
    void aContentTypeNamingTooManyCharsetsIsRefused() {
        StringBuilder type = new StringBuilder("application/json");
        for (String c :
                new String[] {"IBM037", "IBM500", "IBM273", "IBM277", "IBM278", "IBM280", "IBM284", "IBM285", "IBM297"
                }) {
            type.append("; charset=").append(c);
        }
        byte[] body = "{\"model\":\"x\"}".getBytes(StandardCharsets.UTF_8);
        assertInstanceOf(
                McpDetection.Verdict.Mcp.class,
                new McpDetection(null, type.toString()).decide(body, body.length, true));
    }

    static Stream<Arguments> notMcp() {
        return Stream.of(
                Arguments.of("plain JSON", "{\"model\":\"x\",\"messages\":[{\"role\":\"user\"}]}"),
                Arguments.of("JSON-RPC that is not MCP", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\"}"),
                Arguments.of("a form", "method=tools%2Fcall&jsonrpc=2.0"),
                Arguments.of("text naming jsonrpc", "please explain \"jsonrpc\": and \"method\": \"tools/call\""),
                Arguments.of("JSON with jsonrpc as a value", "{\"topic\":\"jsonrpc\", \"method\":\"GET\"}"),
                Arguments.of("SSE that is not MCP", "event: x\ndata: {\"type\":\"ping\"}\n\n"),
                Arguments.of("SSE whose data is text", "data: hello\n\n"),
                Arguments.of("empty", ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notMcp")
    void otherBodiesAreNotMcp(String name, String text) {
        for (String charset : new String[] {"UTF-8", "UTF-16LE", "UTF-32BE"}) {
            byte[] body = text.getBytes(Charset.forName(charset));
            McpDetection d = new McpDetection(null, "application/json");
            assertEquals(McpDetection.NOT_MCP, d.decide(body, body.length, true), charset);
        }
    }

    @org.junit.jupiter.api.Test
    void aLargeBodyWithMcpOnlyNestedDeeperIsNotMcp() {
        byte[] large = ("{\"messages\":[{\"content\":{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"}}],\"p\":\""
                        + "x".repeat(McpDetection.SNIFF_BYTES))
                .getBytes(StandardCharsets.UTF_8);
        assertEquals(McpDetection.NOT_MCP, new McpDetection(null, null).decide(large, large.length, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streamsOnAtOnce")
    void aBodyThatCannotBeJsonStreamsOnAtOnce(String start) {
        byte[] body = start.getBytes(StandardCharsets.UTF_8);
        assertEquals(McpDetection.NOT_MCP, new McpDetection(null, null).decide(body, body.length, false));
    }

    static Stream<String> streamsOnAtOnce() {
        return Stream.of("hello world", "PK\u0003\u0004", "<html>", "dat=1", "  x");
    }

    private static byte[] bytes(String bom, String text, String charset) {
        return (bom + text).getBytes(Charset.forName(charset));
    }
}
