package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.ByteArrayOutputStream;
import java.net.SocketException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Attack: MCP hidden past the first 64 KiB of a body to an unapproved host, in ways beyond McpTailWireTest's. Each case
 * must be refused (403, -32005) with no complete request upstream. Sent chunked with odd part sizes (splits inside
 * escapes, UTF-16 code units and CRLFs).
 */
@ExtendWith(NettyLeakGuard.class)
class AttackTailVariantsTest {
    private static final Duration WAIT = Duration.ofSeconds(Integer.getInteger("attack.wait", 30));
    private static final String PAD = "q".repeat(2 * McpExchange.SNIFF_BYTES);
    private static final String CALL =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete_repo\"}}";

    private RecordingUpstream upstream;
    private McpProxy proxy;

    @BeforeEach
    void start() throws Exception {
        upstream = RecordingUpstream.start();
        proxy = new McpProxy(upstream.port());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    static Stream<Arguments> variants() {
        return Stream.of(
                Arguments.of(
                        "SSE with CR-only line ends",
                        utf8("data: {\"pad\":\"" + PAD + "\"}\r\rdata: " + CALL + "\r\r"),
                        "text/event-stream",
                        997),
                Arguments.of(
                        "SSE with comments and other fields between",
                        utf8(": c\nevent: x\ndata: {\"pad\":\"" + PAD + "\"}\n\n: more\nid: 7\nretry: 5\ndata: " + CALL
                                + "\n\n"),
                        "text/event-stream",
                        997),
                Arguments.of(
                        "SSE data split over data lines",
                        utf8("data: {\"pad\":\"" + PAD + "\"}\n\ndata: {\"jsonrpc\"\ndata: :\"2.0\",\"id\":1,"
                                + "\"method\":\"tools/call\"}\n\n"),
                        "text/event-stream",
                        997),
                Arguments.of(
                        "key escaped, split across parts inside the escape",
                        utf8("{\"pad\":\"" + PAD + "\",\"\\u006a\\u0073\\u006f\\u006e\\u0072\\u0070\\u0063\":\"2.0\","
                                + "\"method\":\"tools\\/call\",\"id\":1}"),
                        "application/json",
                        3),
                Arguments.of(
                        "UTF-16LE without BOM, odd parts",
                        bytes(
                                "{\"pad\":\"" + PAD + "\",\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":1}",
                                StandardCharsets.UTF_16LE),
                        "application/json",
                        997),
                Arguments.of(
                        "UTF-16BE without BOM, declared utf-16",
                        bytes(
                                "{\"pad\":\"" + PAD + "\",\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":1}",
                                StandardCharsets.UTF_16BE),
                        "text/plain",
                        997),
                Arguments.of(
                        "UTF-32LE without BOM",
                        bytes(
                                "{\"pad\":\"" + PAD + "\",\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":1}",
                                Charset.forName("UTF-32LE")),
                        "application/json",
                        4099),
                Arguments.of(
                        "long keys before it",
                        utf8(
                                "{\"" + "k".repeat(5000) + "\":1,\"pad\":\"" + PAD + "\",\"" + "z".repeat(3000)
                                        + "\":{\"a\":[1,2,{\"b\":\"}\"}]},\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":1}"),
                        "application/json",
                        997),
                Arguments.of(
                        "escaped quotes and backslashes in the padding",
                        utf8("{\"pad\":\"" + "\\\\\\\"{[".repeat(20000) + "\",\"jsonrpc\":\"2.0\",\"method\":\"x\"}"),
                        "application/json",
                        997),
                Arguments.of(
                        "a batch whose message is after a nested array",
                        utf8("[[" + "1,".repeat(40000) + "1]," + CALL + "]"),
                        "application/json",
                        997),
                Arguments.of(
                        "white space after the member name, across parts",
                        utf8("{\"pad\":\"" + PAD + "\",\"jsonrpc\"" + " ".repeat(5000) + ":\"2.0\",\"method\":\"x\"}"),
                        "application/json",
                        997),
                Arguments.of(
                        "a gzip body (decided once complete)",
                        dev.agentjail.proxy.testing.Compressed.gzip(
                                utf8("{\"pad\":\"" + PAD + "\",\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"}"), 0),
                        "application/json; x=gzip",
                        997));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void refusedAndNeverCompleteUpstream(String name, byte[] body, String type, int part) throws Exception {
        boolean gzip = name.contains("gzip");
        boolean declared16 = name.contains("declared utf-16");
        boolean wide = name.startsWith("UTF-16") || name.startsWith("UTF-32");
        String t = declared16 ? "text/plain; charset=utf-16" : gzip ? "application/json" : type;
        RawResponse r = send(chunked(body, t, part, gzip ? "Content-Encoding: gzip\r\n" : ""));
        assertEquals(403, r.status(), r.statusLine() + " " + r.body() + "; upstream: " + upstream.requests());
        // A body in UTF-16 or UTF-32, declared or not, is refused by the redaction step, which cannot read it.
        assertEquals(
                wide ? ProxyReasons.UNINSPECTABLE_BODY : McpErrors.REASON_SERVER_NOT_APPROVED,
                r.header(ProxyReasons.HEADER));
        RecordingUpstream.await(() -> upstream.closedConnections() == upstream.connections(), WAIT);
        assertEquals(0, upstream.requests().size(), "a complete request reached the upstream");
    }

    private RawResponse send(byte[] request) throws Exception {
        try (RawClient client = RawClient.connect(proxy.address)) {
            try {
                client.send(request);
            } catch (SocketException answeredEarly) {
                // answered before the end of the body
            }
            return client.readResponse(WAIT);
        }
    }

    private byte[] chunked(byte[] body, String type, int size, String extra) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String authority = "other.test:" + upstream.port();
        out.writeBytes(("POST http://" + authority + "/rpc HTTP/1.1\r\nHost: " + authority + "\r\nContent-Type: " + type
                        + "\r\n" + extra + "Transfer-Encoding: chunked\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        for (int i = 0; i < body.length; i += size) {
            int n = Math.min(size, body.length - i);
            out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body, i, n);
            out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s, Charset charset) {
        return s.getBytes(charset);
    }
}
