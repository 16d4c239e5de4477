package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 17, points 7 and 8, on the wire: a list answered with each status and content type the official SDK clients
 * accept is filtered, anything else a client could act on is refused with 502 and a record; MCP in each encoding a
 * JSON parser reads, sent to a place that is not an approved server, is refused before anything is dialled.
 */
@ExtendWith(NettyLeakGuard.class)
class McpResponseWireTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}";
    private static final String TOOLS = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":["
            + "{\"name\":\"search\",\"inputSchema\":{}},{\"name\":\"delete_repo\",\"inputSchema\":{}}]}}";
    private static final String FILTERED =
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"search\",\"inputSchema\":{}}]}}";
    private static final String SAMPLING =
            "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{}}";

    private RecordingUpstream upstream;
    private McpProxy proxy;
    private volatile byte[] answer;

    @BeforeEach
    void start() throws Exception {
        upstream = RecordingUpstream.start(r -> new String(answer, StandardCharsets.ISO_8859_1));
        proxy = new McpProxy(upstream.port());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    static Stream<Arguments> filtered() {
        return Stream.of(
                Arguments.of(200, "application/json"),
                Arguments.of(201, "application/json"),
                Arguments.of(202, "application/json"),
                Arguments.of(206, "application/json"),
                Arguments.of(299, "application/json"),
                Arguments.of(200, "application/json; charset=utf-8"),
                Arguments.of(201, "Application/JSON"),
                Arguments.of(201, "application/json-x"),
                Arguments.of(200, "text/plain; a=application/json"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("filtered")
    void aJsonListOfEveryAcceptedStatusAndTypeIsFiltered(int status, String type) throws Exception {
        answer = response(status, utf8(TOOLS), "Content-Type: " + type);

        RawResponse r = send(LIST);

        assertEquals(status, r.status());
        assertEquals(FILTERED, r.body());
        assertEquals(1, proxy.records().getLast().mcp().hidden());
    }

    static Stream<Arguments> streams() {
        return Stream.of(
                Arguments.of(200, "text/event-stream"),
                Arguments.of(201, "text/event-stream;charset=utf-8"),
                Arguments.of(299, "Text/Event-Stream"),
                Arguments.of(200, "text/event-stream; x=application/json"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("streams")
    void anEventStreamOfEveryAcceptedStatusAndTypeIsFiltered(int status, String type) throws Exception {
        String events = "event: message\ndata: " + SAMPLING + "\n\nevent: message\ndata: " + TOOLS + "\n\n";
        answer = response(status, utf8(events), "Content-Type: " + type);

        RawResponse r = send(LIST);

        assertEquals(status, r.status());
        assertEquals("event: message\ndata: " + FILTERED + "\n\n", r.body());
        assertEquals(1, proxy.records().getLast().mcp().dropped());
    }

    /**
     * Results with list-shaped arrays of several kinds, under the list request's id or another one (the TypeScript
     * client matches a response to any pending request by id): each array is filtered by its own filter. The policy
     * approves no prompt and no resource.
     */
    static Stream<Arguments> mixedLists() {
        return Stream.of(
                Arguments.of(
                        "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"tools\":[],\"prompts\":[{\"name\":\"evil_prompt\"}]}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"tools\":[],\"prompts\":[]}}"),
                Arguments.of(
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"search\",\"inputSchema\":{}}],"
                                + "\"prompts\":[{\"name\":\"evil_prompt\"}]}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"search\",\"inputSchema\":{}}],"
                                + "\"prompts\":[]}}"),
                Arguments.of(
                        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"resources\":[{\"uri\":\"file:///etc/passwd\"}],"
                                + "\"resourceTemplates\":[{\"uriTemplate\":\"file:///{p}\"}]}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"resources\":[],\"resourceTemplates\":[]}}"),
                Arguments.of(
                        "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"prompts\":[],\"tools\":[{\"name\":\"delete_repo\"}],"
                                + "\"resources\":[{\"uri\":\"a\"}],\"content\":[]}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"prompts\":[],\"tools\":[],\"resources\":[],"
                                + "\"content\":[]}}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mixedLists")
    void everyListInAResultIsFilteredAsJson(String result, String filtered) throws Exception {
        answer = response(200, utf8(result), "Content-Type: application/json");

        RawResponse r = send(LIST);

        assertEquals(200, r.status(), r.body());
        assertEquals(filtered, r.body());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mixedLists")
    void everyListInAResultIsFilteredOnAStream(String result, String filtered) throws Exception {
        answer = response(200, utf8("event: message\ndata: " + result + "\n\n"), "Content-Type: text/event-stream");

        RawResponse r = send(LIST);

        assertEquals(200, r.status(), r.body());
        assertEquals("event: message\ndata: " + filtered + "\n\n", r.body());
    }

    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {"\uFEFFdata: ", "\uFEFFevent: message\r\ndata:", "event: message\rdata: "})
    void anEventStreamIsFilteredAsTheClientsParseIt(String start) throws Exception {
        answer = response(200, utf8(start + TOOLS + "\n\n"), "Content-Type: text/event-stream");

        RawResponse r = send(LIST);

        assertEquals(200, r.status(), r.body());
        assertFalse(r.body().contains("delete_repo"), r.body());
        assertTrue(r.body().endsWith("data: " + FILTERED + "\n\n"), r.body());
        assertEquals(1, proxy.records().getLast().mcp().hidden());
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("types the clients disagree on", 200, utf8(TOOLS), new String[] {
                    "Content-Type: application/json, text/event-stream"
                }),
                Arguments.of("two Content-Type headers", 200, utf8(TOOLS), new String[] {
                    "Content-Type: application/json", "Content-Type: text/event-stream"
                }),
                Arguments.of("two equal Content-Type headers", 201, utf8(TOOLS), new String[] {
                    "Content-Type: application/json", "content-type: application/json"
                }),
                Arguments.of("gzip", 200, gzip(utf8(TOOLS)), new String[] {
                    "Content-Type: application/json", "Content-Encoding: gzip"
                }),
                Arguments.of("UTF-16", 200, TOOLS.getBytes(StandardCharsets.UTF_16LE), new String[] {
                    "Content-Type: application/json; charset=utf-16le"
                }),
                Arguments.of("+json", 200, utf8(TOOLS), new String[] {"Content-Type: application/problem+json"}),
                Arguments.of("unknown type, JSON body", 200, utf8(TOOLS), new String[] {"Content-Type: text/plain"}),
                Arguments.of("no type, JSON body", 201, utf8(TOOLS), new String[0]),
                Arguments.of("redirect", 302, utf8(TOOLS), new String[] {
                    "Content-Type: application/json", "Location: http://other.test/list"
                }),
                Arguments.of("see other", 303, new byte[0], new String[] {"Location: http://other.test/list"}),
                Arguments.of("not modified", 304, new byte[0], new String[0]));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void anythingElseAClientCouldActOnIsRefused(String name, int status, byte[] body, String[] headers)
            throws Exception {
        answer = response(status, body, headers);

        RawResponse r = send(LIST);

        assertEquals(502, r.status(), r.body());
        assertEquals(McpErrors.REASON_RESPONSE_REFUSED, r.header(ProxyReasons.HEADER));
        assertFalse(r.body().contains("delete_repo"), r.body());
        AuditRecord record = proxy.records().getLast();
        assertEquals(AuditRecord.DENY, record.decision());
        assertEquals(McpErrors.REASON_RESPONSE_REFUSED, record.reason());
        assertEquals("tools/list", record.mcp().method());
    }

    static Stream<Arguments> passed() {
        return Stream.of(
                Arguments.of(202, "Accepted", new String[] {"Content-Type: text/plain"}),
                Arguments.of(204, "", new String[0]),
                Arguments.of(
                        400,
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"x\"}}",
                        new String[] {"Content-Type: application/json"}),
                Arguments.of(500, "oops", new String[] {"Content-Type: text/plain"}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("passed")
    void whatNoClientReadsPasses(int status, String body, String[] headers) throws Exception {
        answer = response(status, utf8(body), headers);

        RawResponse r = send(LIST);

        assertEquals(status, r.status());
        assertEquals(body, r.body());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.agentjail.proxy.mcp.McpDetectionTest#mcpBodies")
    void mcpInEveryEncodingToAnUnapprovedPlaceIsRefused(String name, byte[] body) throws Exception {
        assertRefusedElsewhere(wide(body), body, "Content-Type: text/plain");
        assertRefusedElsewhere(wide(body), body);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.agentjail.proxy.mcp.McpDetectionTest#mcpBodies")
    void compressedMcpToAnUnapprovedPlaceIsRefused(String name, byte[] body) throws Exception {
        assertRefusedElsewhere(wide(body), gzip(body), "Content-Type: application/json", "Content-Encoding: gzip");
    }

    /**
     * An EBCDIC tools/call to a place that is not an approved server, its charset hidden from one parser or another:
     * refused by the redaction step, which reads every charset the type could declare (as MCP detection does) and
     * scans none it cannot read, before detection is asked.
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(
            delimiter = '|',
            value = {
                "application/json; x=\"a;charset=bogus\"; charset=IBM037|uninspectable-body",
                "application/json; x=\"a;charset=IBM037;\"; charset=utf-8|uninspectable-body",
                "application/json; x=\"charset=IBM037\"|uninspectable-body",
                "application/json; charset=\"IB\\M037\"|uninspectable-body"
            })
    void mcpInACharsetHiddenInTheContentTypeToAnUnapprovedPlaceIsRefused(String type, String reason) throws Exception {
        byte[] body = McpDetectionTest.CALL.getBytes(java.nio.charset.Charset.forName("IBM037"));

        RawResponse r = send(post("other.test:" + upstream.port(), body, "Content-Type: " + type));

        assertEquals(403, r.status(), r.body());
        assertEquals(reason, r.header(ProxyReasons.HEADER));
        upstream.assertUntouched();
        assertEquals(reason, proxy.records().getLast().reason());
    }

    @org.junit.jupiter.api.Test
    void aCompressedBodyThatIsNotMcpGoesOnWhole() throws Exception {
        answer = utf8(McpProxy.RESULT);
        byte[] body = gzip(utf8("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\"}"));

        RawResponse r = send(post(
                "other.test:" + upstream.port(), body, "Content-Type: application/json", "Content-Encoding: gzip"));

        assertEquals(200, r.status(), r.body());
        assertEquals(1, upstream.requests().size());
        assertEquals(
                new String(body, StandardCharsets.ISO_8859_1),
                upstream.requests().getFirst().body());
    }

    /** Whether the text starts as UTF-16 or UTF-32 does: a wide byte order mark, or a NUL in its first four bytes. */
    private static boolean wide(byte[] text) {
        boolean bom = text.length >= 2
                && ((text[0] == (byte) 0xfe && text[1] == (byte) 0xff)
                        || (text[0] == (byte) 0xff && text[1] == (byte) 0xfe));
        for (int i = 0; i < Math.min(4, text.length) && !bom; i++) {
            bom = text[i] == 0;
        }
        return bom;
    }

    /**
     * Refused with the JSON-RPC error of MCP sent elsewhere; a body in UTF-16 or UTF-32 ({@code wide}) is refused
     * before, by the redaction step, which cannot read a wide encoding (403 uninspectable-body).
     */
    private void assertRefusedElsewhere(boolean wide, byte[] body, String... headers) throws Exception {
        RawResponse r = send(post("other.test:" + upstream.port(), body, headers));

        String reason = wide ? ProxyReasons.UNINSPECTABLE_BODY : McpErrors.REASON_SERVER_NOT_APPROVED;
        assertEquals(403, r.status(), r.body());
        assertEquals(reason, r.header(ProxyReasons.HEADER));
        assertTrue(wide || r.body().contains("\"code\":-32005"), r.body());
        upstream.assertUntouched();
        assertEquals(reason, proxy.records().getLast().reason());
    }

    private RawResponse send(String json) throws Exception {
        return send(post("mcp.test:" + upstream.port(), utf8(json), "Content-Type: application/json"));
    }

    private RawResponse send(byte[] request) throws Exception {
        try (RawClient client = RawClient.connect(proxy.address)) {
            client.send(request);
            return client.readResponse(WAIT);
        }
    }

    private static byte[] post(String authority, byte[] body, String... headers) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringBuilder head = new StringBuilder("POST http://" + authority + "/mcp HTTP/1.1\r\nHost: " + authority
                + "\r\nContent-Length: " + body.length + "\r\n");
        for (String h : headers) {
            head.append(h).append("\r\n");
        }
        out.writeBytes(head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(body);
        return out.toByteArray();
    }

    private static byte[] response(int status, byte[] body, String... headers) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringBuilder head = new StringBuilder("HTTP/1.1 " + status + " Status\r\n");
        for (String h : headers) {
            head.append(h).append("\r\n");
        }
        if (status != 204 && status != 304) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        out.writeBytes(head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(body);
        return out.toByteArray();
    }

    private static byte[] gzip(byte[] plain) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(plain);
        } catch (java.io.IOException impossible) {
            throw new IllegalStateException(impossible);
        }
        return out.toByteArray();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
