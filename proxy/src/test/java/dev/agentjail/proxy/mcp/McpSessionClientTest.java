package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Corpus case 149 with the official MCP Java SDK on both sides: sessions bound to the proxy do not change what a real
 * client does (Streamable HTTP with a session, stateless without one); a session the client ended is refused; and a
 * client whose session the proxy does not know gets 404, on which the SDK starts a new session through the proxy.
 */
@ExtendWith(NettyLeakGuard.class)
class McpSessionClientTest {
    @TempDir
    Path dir;

    private McpTestServer mcp;
    private McpProxy proxy;
    private McpProxy otherProxy;
    private McpSyncClient client;

    @AfterEach
    void tearDown() throws Exception {
        if (client != null) {
            client.closeGracefully();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (otherProxy != null) {
            otherProxy.close();
        }
        if (mcp != null) {
            mcp.close();
        }
    }

    @Test
    void aStreamableSessionWorksAndIsRefusedOnceTheClientEndedIt() throws Exception {
        mcp = McpTestServer.streamable(dir);
        proxy = new McpProxy(mcp.port());
        McpSyncClient c = proxy.client("mcp.test", mcp.port());
        c.initialize();
        assertEquals("ran search", text(c.callTool(new McpSchema.CallToolRequest("search", Map.of("q", "x")))));
        assertEquals(2, c.listTools().tools().size());
        assertFalse(mcp.sessionIds.isEmpty(), "the server issued a session");
        String sid = mcp.sessionIds.getFirst();
        assertTrue(mcp.sessionIds.stream().allMatch(sid::equals));

        c.closeGracefully();
        assertTrue(
                RecordingUpstream.await(() -> deleted(proxy), McpProxy.WAIT), "the SDK ends its session with DELETE");
        int reached = mcp.requests.get();
        RawResponse replay = post(proxy, mcp.port(), sid);

        assertEquals(404, replay.status(), replay.body());
        assertEquals(McpErrors.REASON_SESSION_UNKNOWN, replay.header(ProxyReasons.HEADER));
        assertEquals(reached, mcp.requests.get(), "the ended session never reached the server");
        for (AuditRecord record : proxy.audit.records()) {
            assertFalse(AuditJson.toLine(record).contains(sid), "session id in a record");
        }
        assertEquals(
                1,
                proxy.audit.records().stream()
                        .filter(r -> McpErrors.REASON_SESSION_UNKNOWN.equals(r.reason()))
                        .count(),
                "only the replay was refused");
    }

    @Test
    void aStatelessServerIssuesNoSessionAndKeepsWorking() throws Exception {
        mcp = McpTestServer.stateless(dir);
        proxy = new McpProxy(mcp.port());
        client = proxy.client("mcp.test", mcp.port());
        client.initialize();

        assertEquals(List.of("read_doc", "search"), names(client.listTools()));
        assertEquals("ran read_doc", text(client.callTool(new McpSchema.CallToolRequest("read_doc", Map.of()))));
        assertTrue(mcp.sessionIds.isEmpty(), mcp.sessionIds.toString());
        assertTrue(proxy.audit.records().stream().noneMatch(r -> McpErrors.REASON_SESSION_UNKNOWN.equals(r.reason())));
    }

    @Test
    void aClientWhoseSessionTheProxyDoesNotKnowStartsANewOneThroughIt() throws Exception {
        mcp = McpTestServer.streamable(dir);
        otherProxy = new McpProxy(mcp.port());
        proxy = new McpProxy(mcp.port());
        SwitchingProxySelector route = new SwitchingProxySelector(otherProxy.address);
        client = client(route, mcp.port());
        client.initialize();
        String first = mcp.sessionIds.getFirst();

        // The same client now reaches the server through a proxy that never saw its session issued.
        route.to(proxy.address);
        McpSchema.CallToolResult result = callRecovering(client);

        assertEquals("ran search", text(result));
        String second = mcp.sessionIds.getLast();
        assertFalse(first.equals(second), "a new session, issued through the proxy");
        AuditRecord refused = proxy.audit.records().stream()
                .filter(r -> McpErrors.REASON_SESSION_UNKNOWN.equals(r.reason()))
                .findFirst()
                .orElseThrow();
        assertEquals(404, refused.status());
        assertEquals(AuditRecord.ALLOW, proxy.await("initialize", null).decision());
        assertTrue(mcp.sessionIds.stream().skip(mcp.sessionIds.indexOf(second)).allMatch(second::equals));
    }

    /**
     * A call after the session was lost: the SDK reports the 404 of the call in flight as that call's failure and
     * initializes again on the next one, so one retry is what an agent's client does.
     */
    private static McpSchema.CallToolResult callRecovering(McpSyncClient c) {
        McpSchema.CallToolRequest search = new McpSchema.CallToolRequest("search", Map.of("q", "x"));
        try {
            return c.callTool(search);
        } catch (RuntimeException e) {
            return c.callTool(search);
        }
    }

    private static boolean deleted(McpProxy via) {
        return via.records().stream().anyMatch(r -> "DELETE".equals(r.method()) && r.status() > 0);
    }

    private static List<String> names(McpSchema.ListToolsResult result) {
        return result.tools().stream().map(McpSchema.Tool::name).sorted().toList();
    }

    private static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().getFirst()).text();
    }

    private static McpSyncClient client(ProxySelector route, int port) {
        HttpClient.Builder http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(McpProxy.WAIT)
                .proxy(route);
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(
                        "http://mcp.test:" + port)
                .endpoint("/mcp")
                .clientBuilder(http)
                .build();
        return McpClient.sync(transport).requestTimeout(McpProxy.WAIT).build();
    }

    private static RawResponse post(McpProxy via, int port, String sid) throws Exception {
        String authority = "mcp.test:" + port;
        byte[] body = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\"}".getBytes(StandardCharsets.UTF_8);
        String head = "POST http://" + authority + "/mcp HTTP/1.1\r\nHost: " + authority
                + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                + "Mcp-Session-Id: " + sid + "\r\nContent-Length: " + body.length + "\r\n\r\n";
        try (RawClient raw = RawClient.connect(via.address)) {
            raw.send(head.getBytes(StandardCharsets.ISO_8859_1));
            raw.send(body);
            return raw.readResponse(McpProxy.WAIT);
        }
    }

    /** A proxy setting that can be pointed at another proxy between requests. */
    private static final class SwitchingProxySelector extends ProxySelector {
        private volatile InetSocketAddress current;

        SwitchingProxySelector(InetSocketAddress first) {
            this.current = first;
        }

        void to(InetSocketAddress next) {
            current = next;
        }

        @Override
        public List<Proxy> select(URI uri) {
            return List.of(new Proxy(Proxy.Type.HTTP, current));
        }

        @Override
        public void connectFailed(URI uri, SocketAddress sa, IOException ioe) {}
    }
}
