package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentjail.certs.LeafCertificate;
import dev.agentjail.certs.LeafCertificates;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.TestTls;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * MCP over HTTPS: the SDK client trusts only the proxy's CA, the proxy intercepts the CONNECT, decides on each
 * JSON-RPC message inside, and talks to the SDK server over TLS it verifies against the upstream CA.
 */
@ExtendWith(NettyLeakGuard.class)
class McpInterceptTest {
    private static final String POLICY = """
            version: 1
            network:
              allow: ["mcp.test:%1$d"]
              resolve: {mcp.test: 127.0.0.1}
            mcp:
              servers:
                - name: docs
                  url: https://mcp.test:%1$d/mcp
                  tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
            """;

    @TempDir
    Path dir;

    private final ExecutorService minting = Executors.newSingleThreadExecutor();
    private TestTls tls;
    private McpTestServer mcp;
    private McpProxy proxy;
    private McpSyncClient client;

    @AfterEach
    void tearDown() throws Exception {
        if (client != null) {
            client.closeGracefully();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (mcp != null) {
            mcp.close();
        }
        if (tls != null) {
            tls.close();
        }
        minting.shutdownNow();
    }

    @Test
    void toolsAreFilteredAndDecidedInsideInterceptedTls() throws Exception {
        tls = new TestTls(dir);
        LeafCertificate leaf = new LeafCertificates(
                        tls.upstreamCa(), Clock.systemUTC(), minting, Duration.ofHours(24), 10)
                .forHost("mcp.test")
                .get();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("leaf", leaf.key(), McpTestServer.KEY_PASSWORD.toCharArray(), leaf.chain());
        mcp = McpTestServer.streamableTls(dir.resolve("tomcat"), keys);
        proxy = new McpProxy(POLICY.formatted(mcp.port()), Map.of(), tls.interception());
        client = proxy.client(
                "https://mcp.test:" + mcp.port(),
                TestTls.clientTrusting(tls.proxyCa().certificate()));
        client.initialize();

        assertEquals(
                List.of("read_doc", "search"),
                client.listTools().tools().stream()
                        .map(McpSchema.Tool::name)
                        .sorted()
                        .toList());
        client.callTool(new McpSchema.CallToolRequest("search", Map.of("q", "x")));
        McpError denied = assertThrows(
                McpError.class, () -> client.callTool(new McpSchema.CallToolRequest("delete_repo", Map.of())));

        assertEquals(McpErrors.TOOL_NOT_APPROVED, denied.getJsonRpcError().code());
        assertEquals(
                List.of("search"),
                mcp.calls.stream().map(McpTestServer.Call::tool).toList());
        AuditRecord record = proxy.await("tools/call", "delete_repo");
        assertEquals(AuditRecord.TLS_INTERCEPT, record.tls());
        assertEquals("docs", record.mcp().server());
    }
}
