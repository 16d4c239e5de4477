package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonReader;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.ByteArrayOutputStream;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Corpus section 10 on the wire: raw HTTP through the proxy to a recording upstream, so that a refusal is shown to
 * leave the upstream untouched and to answer with the JSON-RPC error, status and reason documented in docs/mcp.md.
 */
@ExtendWith(NettyLeakGuard.class)
class McpWireTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}";
    private static final String TOOLS = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":["
            + "{\"name\":\"search\",\"inputSchema\":{}},"
            + "{\"name\":\"delete_repo\",\"inputSchema\":{}},"
            + "{\"name\":\"search here\",\"inputSchema\":{}},"
            + "{\"name\":\"read_doc\",\"description\":\"d\",\"inputSchema\":{}}],\"nextCursor\":\"c\"}}";
    private static final String FILTERED = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":["
            + "{\"name\":\"search\",\"inputSchema\":{}},"
            + "{\"name\":\"read_doc\",\"description\":\"d\",\"inputSchema\":{}}],\"nextCursor\":\"c\"}}";

    private RecordingUpstream upstream;
    private McpProxy proxy;

    /** What the recording upstream answers; a test may set its own before sending. */
    private volatile String answer = McpProxy.RESULT;

    @BeforeEach
    void start() throws Exception {
        upstream = RecordingUpstream.start(r -> answer);
        proxy = new McpProxy(upstream.port());
    }

    private static String response(String type, String body) {
        return "HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }

    @Test
    void aJsonToolListIsFiltered() throws Exception {
        answer = response("application/json", TOOLS);

        RawResponse r = send(post(approved(), utf8(LIST)));

        assertEquals(200, r.status());
        assertEquals(FILTERED, r.body());
        assertEquals(String.valueOf(utf8(FILTERED).length), r.header("Content-Length"));
        AuditRecord record = proxy.records().getLast();
        assertEquals(2, record.mcp().hidden());
        assertEquals(utf8(FILTERED).length, record.bytesIn());
    }

    @Test
    void anEventStreamIsFilteredAndUnapprovedSamplingIsDropped() throws Exception {
        answer = response(
                "text/event-stream",
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\","
                        + "\"params\":{}}\n\n"
                        + "id: 9\nevent: message\ndata: " + TOOLS + "\n\n");

        RawResponse r = send(post(approved(), utf8(LIST)));

        assertEquals(200, r.status());
        assertEquals("id: 9\nevent: message\ndata: " + FILTERED + "\n\n", r.body());
        AuditRecord record = proxy.records().getLast();
        assertEquals(2, record.mcp().hidden());
        assertEquals(1, record.mcp().dropped());
        AuditRecord dropped = proxy.audit.records().stream()
                .filter(a -> AuditRecord.KIND_MCP_MESSAGE.equals(a.kind()))
                .findFirst()
                .orElseThrow();
        assertEquals(McpErrors.REASON_SERVER_REQUEST_DROPPED, dropped.reason());
        assertEquals("sampling/createMessage", dropped.mcp().method());
        assertEquals("s1", dropped.mcp().id());
        assertEquals("docs", dropped.mcp().server());
    }

    @Test
    void aListResponseThatIsNotJsonRpcNeverReachesTheAgent() throws Exception {
        answer = response("application/json", "{\"tools\":[{\"name\":\"delete_repo\"}]}");

        RawResponse r = send(post(approved(), utf8(LIST)));

        assertEquals(502, r.status());
        assertEquals(McpErrors.REASON_UNINSPECTABLE, r.header(ProxyReasons.HEADER));
        assertTrue(!r.body().contains("delete_repo"));
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    private static byte[] post(String authority, byte[] body, String... headers) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringBuilder head = new StringBuilder("POST http://" + authority + "/mcp HTTP/1.1\r\nHost: " + authority
                + "\r\nContent-Length: " + body.length + "\r\n");
        boolean typed = false;
        for (String h : headers) {
            head.append(h).append("\r\n");
            typed |= h.toLowerCase().startsWith("content-type:");
        }
        if (!typed) {
            head.append("Content-Type: application/json\r\n");
        }
        head.append("\r\n");
        out.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(body);
        return out.toByteArray();
    }

    private RawResponse send(byte[] request) throws Exception {
        try (RawClient client = RawClient.connect(proxy.address)) {
            try {
                client.send(request);
            } catch (SocketException answeredEarly) {
                // A request refused on its first bytes is answered and closed before the rest of a large body is
                // written; the answer, sent before the reset, is still there to read.
            }
            return client.readResponse(WAIT);
        }
    }

    private String approved() {
        return "mcp.test:" + upstream.port();
    }

    private String other() {
        return "other.test:" + upstream.port();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String call(String nameJson) {
        return "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":" + nameJson
                + ",\"arguments\":{}}}";
    }

    static Stream<Arguments> refusedAtTheApprovedServer() {
        return Stream.of(
                refused("139 unapproved tool", call("\"delete_repo\""), 200, -32001, "mcp-tool-not-approved", "7"),
                refused("140 case", call("\"Search\""), 200, -32001, "mcp-tool-not-approved", "7"),
                refused("140 trailing space", call("\"search \""), 200, -32001, "mcp-tool-not-approved", "7"),
                refused("140 NUL", call("\"search\\u0000\""), 200, -32001, "mcp-tool-not-approved", "7"),
                refused("140 Cyrillic e", call("\"s\u0435arch\""), 200, -32001, "mcp-tool-not-approved", "7"),
                refused("140 path", call("\"search/../delete_repo\""), 200, -32001, "mcp-tool-not-approved", "7"),
                refused(
                        "140 name twice",
                        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search\","
                                + "\"name\":\"delete_repo\"}}",
                        400,
                        -32700,
                        "mcp-parse-error",
                        "null"),
                refused("malformed", "{\"jsonrpc\":\"2.0\",", 400, -32700, "mcp-parse-error", "null"),
                refused("empty body", "", 400, -32700, "mcp-parse-error", "null"),
                refused("152 BOM", "\uFEFF" + call("\"search\""), 400, -32700, "mcp-parse-error", "null"),
                refused("batch", "[" + call("\"search\"") + "]", 400, -32600, "mcp-batch-refused", "null"),
                refused(
                        "jsonrpc 1.0",
                        "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}",
                        400,
                        -32600,
                        "mcp-invalid-request",
                        "3"),
                refused(
                        "member JSON-RPC does not define",
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"Method\":\"tools/call\"}",
                        400,
                        -32600,
                        "mcp-invalid-request",
                        "3"),
                refused(
                        "method not passed",
                        "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"debug/eval\"}",
                        200,
                        -32006,
                        "mcp-method-not-permitted",
                        "\"a\""),
                refused(
                        "resource not approved",
                        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///etc/passwd\"}}",
                        200,
                        -32002,
                        "mcp-resource-not-approved",
                        "4"),
                refused(
                        "prompt not approved",
                        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\"}}",
                        200,
                        -32003,
                        "mcp-prompt-not-approved",
                        "5"));
    }

    private static Arguments refused(String name, String body, int status, int code, String reason, String id) {
        return Arguments.of(name, body, status, code, reason, id);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedAtTheApprovedServer")
    void refusedAtTheApprovedServer(String name, String body, int status, int code, String reason, String id)
            throws Exception {
        RawResponse r = send(post(approved(), utf8(body)));

        assertEquals(status, r.status(), r.body());
        assertEquals(reason, r.header(ProxyReasons.HEADER));
        Json.Obj error = (Json.Obj) JsonReader.parse(utf8(r.body()));
        assertEquals(id, error.get("id").text());
        assertEquals(
                String.valueOf(code),
                ((Json.Obj) error.get("error")).get("code").text());
        assertTrue(!r.body().contains("arguments"), "arguments are never echoed");
        upstream.assertUntouched();
        AuditRecord record = proxy.records().getLast();
        assertEquals(AuditRecord.DENY, record.decision());
        assertEquals(reason, record.reason());
        assertEquals("docs", record.mcp().server());
    }

    @Test
    void invalidUtf8IsAParseError() throws Exception {
        byte[] body = utf8(call("\"searchXX\""));
        int at = new String(body, StandardCharsets.ISO_8859_1).indexOf("XX");
        body[at] = (byte) 0xc0;
        body[at + 1] = (byte) 0xaf;

        RawResponse r = send(post(approved(), body));

        assertEquals(400, r.status());
        assertEquals(McpErrors.REASON_PARSE_ERROR, r.header(ProxyReasons.HEADER));
        upstream.assertUntouched();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badHeaders")
    void sessionAndVersionHeadersAreChecked(String header) throws Exception {
        RawResponse r = send(post(approved(), utf8(call("\"search\"")), header));

        assertEquals(400, r.status());
        assertEquals(McpErrors.REASON_BAD_HEADER, r.header(ProxyReasons.HEADER));
        assertTrue(r.body().contains("\"code\":-32600"), r.body());
        upstream.assertUntouched();
    }

    static Stream<String> badHeaders() {
        return Stream.of(
                "Mcp-Session-Id: a b",
                "Mcp-Session-Id: caf\u00e9",
                "Mcp-Session-Id: " + "a".repeat(McpExchange.MAX_SESSION_ID + 1),
                "Mcp-Session-Id: a\r\nMcp-Session-Id: b",
                "MCP-Protocol-Version: 2099-01-01",
                "MCP-Protocol-Version: latest");
    }

    @Test
    void knownVersionsAndWellFormedSessionsPass() throws Exception {
        // The session must be one the server issued through this proxy (corpus case 149, McpSessionBindingTest).
        answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + "Mcp-Session-Id: 6f1c2a9e-0d7b-4c1e-9a55-1b2c3d4e5f60\r\nContent-Length: 36\r\n\r\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
        assertEquals(
                200,
                send(post(approved(), utf8("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}")))
                        .status());
        answer = McpProxy.RESULT;

        RawResponse r = send(post(
                approved(),
                utf8(call("\"search\"")),
                "Mcp-Session-Id: 6f1c2a9e-0d7b-4c1e-9a55-1b2c3d4e5f60",
                "MCP-Protocol-Version: 2025-06-18"));

        assertEquals(200, r.status());
        assertEquals(2, upstream.requests().size());
    }

    /**
     * A tools/call of {@code search} read as UTF-8; read as UTF-7 (iconv-lite, which the TypeScript SDK server decodes
     * a declared charset with), a second {@code params} names {@code delete_repo}.
     */
    static final String UTF7_SMUGGLED = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
            + "\"name\":\"search\",\"arguments\":{\"q\":\"+ACIAfQB9ACwAIgBwAGEAcgBhAG0AcwAiADoAewAiAG4AYQBtAGUAIgA6ACIAZABl"
            + "AGwAZQB0AGUAXwByAGUAcABvACIALAAiAGEAcgBnAHUAbQBlAG4AdABzACIAOgB7ACIAcQAiADoAIg-\"}}}";

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.agentjail.proxy.mcp.McpExchangeTest#otherTypes")
    void aBodyTheServerCouldReadInAnotherCharsetIsRefused(String type) throws Exception {
        RawResponse r = send(post(approved(), utf8(UTF7_SMUGGLED), "Content-Type: " + type));

        upstream.assertUntouched();
        if (wellFormedOnce(type)) {
            assertEquals(415, r.status(), r.body());
            assertEquals(McpErrors.REASON_CHARSET_REFUSED, r.header(ProxyReasons.HEADER));
            assertTrue(r.body().contains("\"code\":-32007"), r.body());
            AuditRecord record = proxy.records().getLast();
            assertEquals(AuditRecord.DENY, record.decision());
            assertEquals(McpErrors.REASON_CHARSET_REFUSED, record.reason());
            assertEquals("docs", record.mcp().server());
        } else {
            // A repeated parameter or a malformed list: the request decoder refuses it before any inspection.
            assertEquals(400, r.status(), r.body());
            assertEquals(
                    dev.agentjail.proxy.http.StrictRequestDecoder.AMBIGUOUS_BODY_HEADER, r.header(ProxyReasons.HEADER));
        }
    }

    private static boolean wellFormedOnce(String type) {
        try {
            return !dev.agentjail.proxy.http.MediaType.parse(type).repeatsAParameter();
        } catch (dev.agentjail.proxy.http.MediaType.Malformed e) {
            return false;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.agentjail.proxy.mcp.McpExchangeTest#utf8Types")
    void aUtf8BodyGoesOnWithItsType(String type) throws Exception {
        RawResponse r = send(post(approved(), utf8(UTF7_SMUGGLED), "Content-Type: " + type));

        assertEquals(200, r.status(), r.body());
        assertEquals(1, upstream.requests().size());
        assertEquals(UTF7_SMUGGLED, upstream.requests().getFirst().body());
    }

    @Test
    void compressedMcpBodiesAreRefused() throws Exception {
        RawResponse r = send(post(approved(), new byte[] {31, -117, 8, 0}, "Content-Encoding: gzip"));

        assertEquals(415, r.status());
        assertEquals(McpErrors.REASON_UNINSPECTABLE, r.header(ProxyReasons.HEADER));
        assertTrue(r.body().contains("\"code\":-32007"), r.body());
        upstream.assertUntouched();
    }

    @Test
    void oversizedMcpBodiesAreRefused() throws Exception {
        String padding = "x".repeat(McpExchange.MAX_MESSAGE_BYTES);
        RawResponse r = send(post(approved(), utf8(call("\"search\"").replace("{}", "{\"p\":\"" + padding + "\"}"))));

        assertEquals(413, r.status());
        assertTrue(r.body().contains("\"code\":-32007"), r.body());
        upstream.assertUntouched();
    }

    @Test
    void anApprovedCallGoesThroughUnchanged() throws Exception {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"search\","
                + "\"arguments\":{\"q\":\"netty\"}}}";

        RawResponse r = send(post(approved(), utf8(body)));

        assertEquals(200, r.status());
        assertEquals(body, upstream.requests().getFirst().body());
        AuditRecord record = proxy.records().getLast();
        assertEquals(AuditRecord.ALLOW, record.decision());
        assertEquals("search", record.mcp().tool());
        assertEquals("8", record.mcp().id());
        assertEquals("{\"q\":\"netty\"}".length(), record.mcp().argsBytes());
    }

    static Stream<Arguments> mcpElsewhere() {
        return Stream.of(
                Arguments.of(
                        "138 initialize",
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
                        "application/json"),
                Arguments.of("152 as text/plain", call("\"search\""), "text/plain"),
                Arguments.of(
                        "notification",
                        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                        "application/json"),
                Arguments.of(
                        "duplicate keys",
                        "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"method\":\"x\"}",
                        "application/json"),
                Arguments.of(
                        "large, decided on its start",
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"p\":\""
                                + "y".repeat(2 * McpExchange.SNIFF_BYTES) + "\"}}}",
                        "application/json"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mcpElsewhere")
    void mcpToAnUnapprovedPlaceIsRefused(String name, String body, String type) throws Exception {
        RawResponse r = send(post(other(), utf8(body), "Content-Type: " + type));

        assertEquals(403, r.status());
        assertEquals(McpErrors.REASON_SERVER_NOT_APPROVED, r.header(ProxyReasons.HEADER));
        assertTrue(r.body().contains("\"code\":-32005"), r.body());
        upstream.assertUntouched();
        assertEquals(
                McpErrors.REASON_SERVER_NOT_APPROVED, proxy.records().getLast().reason());
    }

    static Stream<Arguments> notMcp() {
        return Stream.of(
                Arguments.of("plain JSON", "{\"model\":\"x\",\"messages\":[]}"),
                Arguments.of("JSON-RPC that is not MCP", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\"}"),
                Arguments.of("not JSON", "hello=world"),
                Arguments.of("large JSON", "{\"prompt\":\"" + "z".repeat(3 * McpExchange.SNIFF_BYTES) + "\"}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notMcp")
    void otherPostsPassUnchanged(String name, String body) throws Exception {
        RawResponse r = send(post(other(), utf8(body)));

        assertEquals(200, r.status());
        assertEquals(body, upstream.requests().getFirst().body());
        AuditRecord record = proxy.records().getLast();
        assertEquals(AuditRecord.ALLOW, record.decision());
        assertEquals(null, record.mcp());
    }

    @Test
    void requestsOnOneConnectionContinueAfterARefusal() throws Exception {
        try (RawClient client = RawClient.connect(proxy.address)) {
            client.send(post(approved(), utf8(call("\"delete_repo\""))));
            client.send(post(approved(), utf8(call("\"search\""))));
            List<RawResponse> responses = client.readResponses(2, WAIT);
            assertEquals(
                    List.of(200, 200),
                    responses.stream().map(RawResponse::status).toList());
            assertEquals(McpErrors.REASON_TOOL_NOT_APPROVED, responses.get(0).header(ProxyReasons.HEADER));
            assertEquals(McpProxy.RESULT_BODY, responses.get(1).body());
        }
        assertEquals(1, upstream.requests().size());
    }
}
