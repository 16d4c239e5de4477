package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.certs.LeafCertificate;
import dev.agentjail.certs.LeafCertificates;
import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credential injection on MCP auth headers (issue 6): the official SDK's client sends {@code Authorization: Bearer
 * <placeholder>} to an approved MCP server over intercepted HTTPS; the proxy inspects every JSON-RPC message and, on
 * the credential's host, swaps the placeholder for the real value in that header only. The SDK's server receives the
 * real value, the audit records never hold it, and a server that is not the credential's host gets neither.
 */
@ExtendWith(NettyLeakGuard.class)
class McpCredentialTest {
    private static final String HOST = "mcp.test";
    private static final String PLACEHOLDER = "agentjail-placeholder-0123456789abcdef0123456789abcdef";
    private static final String REAL = "real-mcp-token-7f3a9c1e5b2d4086";
    private static final String ENV = "MCP_TOKEN";

    private static final String POLICY = """
            version: 1
            network:
              allow: ["%1$s:%2$d"]
              resolve: {%1$s: 127.0.0.1}
            mcp:
              servers:
                - name: docs
                  url: https://%1$s:%2$d/mcp
                  tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
            """;

    @TempDir
    Path dir;

    private final ExecutorService minting = Executors.newSingleThreadExecutor();
    private TestTls tls;
    private McpTestServer mcp;
    private McpProxy proxy;
    private McpSyncClient client;

    /** The SDK's Streamable HTTP server over HTTPS, with a leaf for {@value #HOST} from the CA the proxy trusts. */
    @BeforeEach
    void startServer() throws Exception {
        tls = new TestTls(dir);
        LeafCertificate leaf = new LeafCertificates(
                        tls.upstreamCa(), Clock.systemUTC(), minting, Duration.ofHours(24), 10)
                .forHost(HOST)
                .get();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("leaf", leaf.key(), McpTestServer.KEY_PASSWORD.toCharArray(), leaf.chain());
        mcp = McpTestServer.streamableTls(dir.resolve("tomcat"), keys);
    }

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
        tls.close();
        minting.shutdownNow();
    }

    @Test
    void theServerReceivesTheRealValueInTheAuthorizationHeaderOfEveryMessage() throws Exception {
        startProxy(new Target(HOST, HostKind.DNS, mcp.port()));

        client.initialize();
        assertEquals(
                List.of("read_doc", "search"),
                client.listTools().tools().stream()
                        .map(McpSchema.Tool::name)
                        .sorted()
                        .toList());
        client.callTool(new McpSchema.CallToolRequest("search", Map.of("q", "x")));

        AuditRecord call = await("tools/call");
        assertAll(
                () -> assertEquals(List.of("search"), calledTools()),
                () -> assertTrue(
                        mcp.authorizations.size() >= 3, () -> "initialize, list and call: " + mcp.authorizations),
                () -> assertTrue(
                        mcp.authorizations.stream().allMatch(("Bearer " + REAL)::equals),
                        () -> "every request should carry the real value: " + shown(mcp.authorizations)),
                () -> assertEquals(AuditRecord.ALLOW, call.decision()),
                () -> assertEquals(AuditRecord.TLS_INTERCEPT, call.tls()),
                () -> assertEquals("docs", call.mcp().server()));
        String log = auditLog();
        assertFalse(log.contains(REAL), "an audit record holds the real value");
        assertFalse(log.contains(PLACEHOLDER), "an audit record holds the placeholder");
    }

    @Test
    void aServerThatIsNotTheCredentialsHostGetsNeitherTheValueNorThePlaceholder() throws Exception {
        // The same host on another port is another host for a credential rule.
        startProxy(new Target(HOST, HostKind.DNS, mcp.port() == 65535 ? mcp.port() - 1 : mcp.port() + 1));

        client.initialize();
        client.callTool(new McpSchema.CallToolRequest("search", Map.of("q", "x")));

        await("tools/call");
        assertAll(
                () -> assertEquals(List.of("search"), calledTools()),
                () -> assertFalse(mcp.authorizations.isEmpty(), "the server saw no request"),
                () -> assertTrue(
                        mcp.authorizations.stream().noneMatch(a -> a.contains(REAL) || a.contains(PLACEHOLDER)),
                        () -> "the placeholder must be redacted, not swapped: " + shown(mcp.authorizations)),
                () -> assertTrue(
                        mcp.authorizations.stream().allMatch(a -> a.startsWith("Bearer [REDACTED")),
                        () -> "a redaction marker: " + shown(mcp.authorizations)));
        String log = auditLog();
        assertFalse(log.contains(REAL), "an audit record holds the real value");
        assertTrue(
                log.contains("credential-placeholder"), () -> "the record names the placeholder it redacted: " + log);
    }

    /**
     * Starts the proxy with the credential {@value #ENV} for {@code credentialHost}, and the SDK client, which sends
     * the placeholder as its bearer token and trusts only the proxy's CA.
     */
    private void startProxy(Target credentialHost) throws Exception {
        InjectedCredential credential = new InjectedCredential(
                new CredentialRule(ENV, null, List.of(credentialHost), "authorization"), PLACEHOLDER, REAL);
        proxy = new McpProxy(POLICY.formatted(HOST, mcp.port()), Map.of(), tls.interception(), List.of(credential));
        HttpClient.Builder http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(McpProxy.WAIT)
                .proxy(ProxySelector.of(proxy.address))
                .sslContext(TestTls.clientTrusting(tls.proxyCa().certificate()));
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(
                        "https://" + HOST + ":" + mcp.port())
                .endpoint("/mcp")
                .clientBuilder(http)
                .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + PLACEHOLDER))
                .build();
        client = McpClient.sync(transport).requestTimeout(McpProxy.WAIT).build();
    }

    private List<String> calledTools() {
        return mcp.calls.stream().map(McpTestServer.Call::tool).toList();
    }

    private AuditRecord await(String method) throws InterruptedException {
        RecordingUpstream.await(() -> find(method) != null, McpProxy.WAIT);
        AuditRecord r = find(method);
        assertTrue(r != null, () -> "no record of " + method + " in " + auditLog());
        return r;
    }

    private AuditRecord find(String method) {
        return proxy.audit.records().stream()
                .filter(r -> r.mcp() != null && method.equals(r.mcp().method()))
                .findFirst()
                .orElse(null);
    }

    private String auditLog() {
        StringBuilder out = new StringBuilder();
        for (AuditRecord r : proxy.audit.records()) {
            out.append(AuditJson.toLine(r)).append('\n');
        }
        return out.toString();
    }

    /** The header values for a failure message, with the real value and the placeholder named, not shown. */
    private static List<String> shown(List<String> values) {
        return values.stream()
                .map(v -> v.replace(REAL, "<real>").replace(PLACEHOLDER, "<placeholder>"))
                .toList();
    }
}
