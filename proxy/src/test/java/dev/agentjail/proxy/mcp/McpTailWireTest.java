package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.ByteArrayOutputStream;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * MCP to a destination that is not an approved server, hidden past the start of a body the proxy decides on and then
 * streams (docs/mcp.md, "MCP anywhere else"): the body is followed to its end, the request is refused with the
 * JSON-RPC error, and the upstream never receives a complete request, with a length or chunked, in one piece or many.
 * Large bodies that are no JSON-RPC message (an LLM request whose tool schema names {@code jsonrpc}) arrive whole.
 */
@ExtendWith(NettyLeakGuard.class)
class McpTailWireTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String PAD = "q".repeat(8 * McpExchange.SNIFF_BYTES);

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

    static Stream<Arguments> hidden() {
        return Stream.of(
                Arguments.of(
                        "jsonrpc after padding",
                        utf8("{\"pad\":\"" + PAD + "\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}"),
                        "application/json"),
                Arguments.of(
                        "duplicate method member",
                        utf8("{\"method\":\"eth_call\",\"pad\":\"" + PAD + "\",\"method\":\"tools/call\",\"id\":1}"),
                        "application/json"),
                Arguments.of(
                        "escaped member name",
                        utf8("{\"pad\":\"" + PAD + "\",\"\\u006a\\u0073onrpc\":\"2.0\",\"method\":\"tools/list\"}"),
                        "text/plain"),
                Arguments.of(
                        "later message of a batch",
                        utf8("[{\"pad\":\"" + PAD + "\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}]"),
                        "application/json"),
                Arguments.of(
                        "a later event of an event stream",
                        utf8("data: {\"pad\":\"" + PAD
                                + "\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"}\n\n"),
                        "text/event-stream"),
                Arguments.of(
                        "the name right at the end",
                        utf8("{\"pad\":\"" + PAD + "\",\"jsonrpc\":1}"),
                        "application/json"));
    }

    @ParameterizedTest(name = "{0}, with a length")
    @MethodSource("hidden")
    void mcpPastTheStartIsRefusedAndNeverArrivesWhole(String name, byte[] body, String type) throws Exception {
        RawResponse r = send(withLength(body, type));

        assertRefused(r);
    }

    @ParameterizedTest(name = "{0}, chunked")
    @MethodSource("hidden")
    void chunkedToo(String name, byte[] body, String type) throws Exception {
        RawResponse r = send(chunked(body, type, 997));

        assertRefused(r);
    }

    @Test
    void aLargeLlmRequestWhoseToolSchemaNamesJsonrpcArrivesWhole() throws Exception {
        String text = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" + PAD + "\"}],"
                + "\"tools\":[{\"name\":\"rpc\",\"input_schema\":{\"type\":\"object\",\"properties\":"
                + "{\"jsonrpc\":{\"type\":\"string\"},\"method\":{\"enum\":[\"tools/call\"]}}}}]}";

        RawResponse r = send(chunked(utf8(text), "application/json", 4096));

        assertEquals(200, r.status());
        assertEquals(text, upstream.requests().getFirst().body());
        AuditRecord record = proxy.records().getLast();
        assertEquals(AuditRecord.ALLOW, record.decision());
        assertEquals(null, record.mcp());
    }

    private void assertRefused(RawResponse r) throws Exception {
        assertEquals(403, r.status());
        assertEquals(McpErrors.REASON_SERVER_NOT_APPROVED, r.header(ProxyReasons.HEADER));
        assertTrue(r.body().contains("\"code\":-32005"), r.body());
        assertTrue(r.body().contains("past the first " + McpExchange.SNIFF_BYTES + " bytes"), r.body());
        // The start streamed on, but the request never completed upstream: no server acts on it.
        RecordingUpstream.await(() -> upstream.closedConnections() == upstream.connections(), WAIT);
        assertEquals(0, upstream.requests().size(), "a complete request reached the upstream");
        AuditRecord record = proxy.records().getLast();
        assertEquals(AuditRecord.DENY, record.decision());
        assertEquals(McpErrors.REASON_SERVER_NOT_APPROVED, record.reason());
    }

    private RawResponse send(byte[] request) throws Exception {
        try (RawClient client = RawClient.connect(proxy.address)) {
            try {
                client.send(request);
            } catch (SocketException answeredEarly) {
                // Refused while the body still streams: the answer, sent before the close, is there to read.
            }
            return client.readResponse(WAIT);
        }
    }

    private byte[] withLength(byte[] body, String type) {
        return concat(head(type, "Content-Length: " + body.length), body);
    }

    private byte[] chunked(byte[] body, String type, int size) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(head(type, "Transfer-Encoding: chunked"));
        for (int i = 0; i < body.length; i += size) {
            int n = Math.min(size, body.length - i);
            out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body, i, n);
            out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }

    private byte[] head(String type, String framing) {
        String authority = "other.test:" + upstream.port();
        return ("POST http://" + authority + "/rpc HTTP/1.1\r\nHost: " + authority + "\r\nContent-Type: " + type
                        + "\r\n" + framing + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
