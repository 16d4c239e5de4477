package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Corpus case 149 on the wire: an {@code Mcp-Session-Id} is passed to an approved server only if that server issued
 * it through this proxy (one proxy per jail) and it has not ended; anything else, and a {@code Last-Event-ID} without
 * such a session, is answered 404 with a JSON-RPC error before anything is dialled. Raw HTTP to a recording upstream,
 * so that a refusal is shown to leave the server untouched.
 */
@ExtendWith(NettyLeakGuard.class)
class McpSessionBindingTest {
    /** Two approved servers on one upstream: {@code docs} at /mcp and {@code mail} at /mail. */
    private static final String POLICY = """
            version: 1
            network:
              allow: ["mcp.test:%1$d"]
              resolve: {mcp.test: 127.0.0.1}
            mcp:
              servers:
                - name: docs
                  url: http://mcp.test:%1$d/mcp
                  tools: {allow: ["search*"]}
                - name: mail
                  url: http://mcp.test:%1$d/mail
                  tools: {allow: ["send_*"]}
            """;

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
    private static final String CALL =
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{}}}";
    private static final String MADE_UP = "6f1c2a9e-0d7b-4c1e-9a55-1b2c3d4e5f60";

    private final AtomicInteger issued = new AtomicInteger();
    /** When set, the upstream answers every request 404, as a server does for a session it ended. */
    private volatile boolean ended;

    private RecordingUpstream upstream;
    private McpProxy proxy;
    private McpProxy otherJail;

    @BeforeEach
    void start() throws Exception {
        upstream = RecordingUpstream.start(r -> {
            if (ended) {
                return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            }
            if (r.body().contains("\"initialize\"")) {
                String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
                return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: sid-"
                        + issued.incrementAndGet() + "-a7c41e0b93d2\r\nContent-Length: " + body.length() + "\r\n\r\n"
                        + body;
            }
            return McpProxy.answer(r);
        });
        proxy = new McpProxy(POLICY.formatted(upstream.port()), Map.of());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        if (otherJail != null) {
            otherJail.close();
        }
        upstream.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"POST", "GET", "DELETE"})
    void aMadeUpSessionIsRefusedAndNeverReachesTheServer(String method) throws Exception {
        RawResponse r = send(proxy, request(method, "/mcp", method.equals("POST") ? CALL : null, session(MADE_UP)));

        assertUnknownSession(r);
        upstream.assertUntouched();
        AuditRecord record = proxy.records().getLast();
        assertEquals(AuditRecord.DENY, record.decision());
        assertEquals(McpErrors.REASON_SESSION_UNKNOWN, record.reason());
        assertEquals("mcp.servers[docs]", record.rule());
        assertEquals(404, record.status());
        assertEquals("docs", record.mcp().server());
        assertEquals(0, record.bytesOut());
        assertNoSessionIdIn(proxy, MADE_UP);
    }

    @Test
    void aSessionIssuedThroughTheProxyWorksUntilTheClientDeletesIt() throws Exception {
        String sid = initialize(proxy, "/mcp");

        RawResponse call = send(proxy, request("POST", "/mcp", CALL, session(sid)));
        assertEquals(200, call.status());
        assertEquals(List.of(sid), upstream.requests().getLast().headers("Mcp-Session-Id"));
        // Resuming a stream of a known session passes, its Last-Event-ID unchanged.
        RawResponse resumed = send(proxy, request("GET", "/mcp", null, session(sid), "Last-Event-ID: 41"));
        assertEquals(200, resumed.status());
        assertEquals(List.of("41"), upstream.requests().getLast().headers("Last-Event-ID"));
        RawResponse deleted = send(proxy, request("DELETE", "/mcp", null, session(sid)));
        assertEquals(200, deleted.status());
        assertTrue(upstream.requests().getLast().requestLine().startsWith("DELETE "));
        int reached = upstream.requests().size();

        assertUnknownSession(send(proxy, request("POST", "/mcp", CALL, session(sid))));
        assertUnknownSession(send(proxy, request("GET", "/mcp", null, session(sid), "Last-Event-ID: 41")));
        Thread.sleep(100);
        assertEquals(reached, upstream.requests().size(), "a deleted session never reaches the server");
        assertNoSessionIdIn(proxy, sid);
    }

    @Test
    void aLastEventIdWithoutASessionIsRefused() throws Exception {
        RawResponse r = send(proxy, request("GET", "/mcp", null, "Last-Event-ID: 7"));

        assertUnknownSession(r);
        assertTrue(r.body().contains("Last-Event-ID"), r.body());
        upstream.assertUntouched();
    }

    @Test
    void requestsWithoutASessionStillPass() throws Exception {
        // A stateless server issues no session: its clients send none, and nothing changes for them.
        assertEquals(200, send(proxy, request("POST", "/mcp", CALL)).status());
        assertEquals(200, send(proxy, request("GET", "/mcp", null)).status());
        assertEquals(2, upstream.requests().size());
    }

    @Test
    void aSessionIsBoundToTheServerThatIssuedIt() throws Exception {
        String sid = initialize(proxy, "/mcp");

        RawResponse r = send(proxy, request("POST", "/mail", CALL.replace("search", "send_mail"), session(sid)));

        assertUnknownSession(r);
        assertEquals("mcp.servers[mail]", r.header(ProxyReasons.RULE_HEADER));
        Thread.sleep(100);
        assertEquals(1, upstream.requests().size(), "only the initialize reached the upstream");
    }

    @Test
    void aSessionIssuedToAnotherJailIsRefused() throws Exception {
        // Another `agentjail run` (another project) has its own proxy: it never saw this session issued.
        otherJail = new McpProxy(POLICY.formatted(upstream.port()), Map.of());
        String sid = initialize(otherJail, "/mcp");

        assertUnknownSession(send(proxy, request("POST", "/mcp", CALL, session(sid))));
        assertUnknownSession(send(proxy, request("GET", "/mcp", null, session(sid), "Last-Event-ID: 3")));
        Thread.sleep(100);
        assertEquals(1, upstream.requests().size(), "only the other jail's initialize reached the upstream");
        // In its own jail the session works.
        assertEquals(
                200,
                send(otherJail, request("POST", "/mcp", CALL, session(sid))).status());
    }

    @Test
    void aSessionTheServerEndedIsForgotten() throws Exception {
        String sid = initialize(proxy, "/mcp");
        ended = true;
        RawResponse gone = send(proxy, request("POST", "/mcp", CALL, session(sid)));
        assertEquals(404, gone.status());
        assertNull(gone.header(ProxyReasons.HEADER), "the server's own 404");
        ended = false;
        int reached = upstream.requests().size();

        assertUnknownSession(send(proxy, request("POST", "/mcp", CALL, session(sid))));
        Thread.sleep(100);
        assertEquals(reached, upstream.requests().size());
    }

    @Test
    void aNewInitializeStartsANewSessionThatWorksBesideTheOld() throws Exception {
        String first = initialize(proxy, "/mcp");
        String second = initialize(proxy, "/mcp");

        assertFalse(first.equals(second));
        assertEquals(
                200, send(proxy, request("POST", "/mcp", CALL, session(first))).status());
        assertEquals(
                200, send(proxy, request("POST", "/mcp", CALL, session(second))).status());
    }

    /** Initializes through {@code via} and returns the session id the server issued, as the client saw it. */
    private String initialize(McpProxy via, String path) throws Exception {
        RawResponse r = send(via, request("POST", path, INITIALIZE));
        assertEquals(200, r.status(), r.body());
        String sid = r.header("Mcp-Session-Id");
        assertTrue(sid != null && sid.startsWith("sid-"), String.valueOf(sid));
        return sid;
    }

    private static void assertUnknownSession(RawResponse r) {
        assertEquals(404, r.status(), r.body());
        assertEquals(McpErrors.REASON_SESSION_UNKNOWN, r.header(ProxyReasons.HEADER));
        assertEquals("application/json", r.header("Content-Type"));
        assertTrue(r.body().startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32008,"), r.body());
    }

    /** No record of {@code via}, as written to the log, contains the session id. */
    private static void assertNoSessionIdIn(McpProxy via, String sid) {
        for (AuditRecord record : via.audit.records()) {
            assertFalse(AuditJson.toLine(record).contains(sid), "session id in a record");
        }
    }

    private static String session(String id) {
        return "Mcp-Session-Id: " + id;
    }

    private static RawResponse send(McpProxy via, byte[] request) throws Exception {
        try (RawClient client = RawClient.connect(via.address)) {
            client.send(request);
            return client.readResponse(McpProxy.WAIT);
        }
    }

    private byte[] request(String method, String path, String body, String... headers) {
        String authority = "mcp.test:" + upstream.port();
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        StringBuilder head =
                new StringBuilder(method + " http://" + authority + path + " HTTP/1.1\r\nHost: " + authority + "\r\n");
        if (body != null) {
            head.append("Content-Type: application/json\r\nContent-Length: ")
                    .append(bytes.length)
                    .append("\r\n");
        }
        for (String h : headers) {
            head.append(h).append("\r\n");
        }
        head.append("\r\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(bytes);
        return out.toByteArray();
    }
}
