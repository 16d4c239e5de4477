package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.certs.LeafCertificate;
import dev.agentjail.certs.LeafCertificates;
import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.ProxyServer;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.StubResolver;
import dev.agentjail.proxy.testing.TestTls;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;
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
    private static final String KEY_PASSWORD = "test-password";

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
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final MemoryAuditSink audit = new MemoryAuditSink();
    private final Tomcat tomcat = new Tomcat();
    private TestTls tls;
    private McpSyncServer mcp;
    private int port;
    private ProxyServer proxy;
    private McpSyncClient client;

    @BeforeEach
    void startServer() throws Exception {
        tls = new TestTls(dir);
        port = serve();
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
            mcp.closeGracefully();
        }
        tomcat.stop();
        tomcat.destroy();
        tls.close();
        minting.shutdownNow();
    }

    @Test
    void theServerReceivesTheRealValueInTheAuthorizationHeaderOfEveryMessage() throws Exception {
        startProxy(new Target(HOST, HostKind.DNS, port));

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
                () -> assertEquals(List.of("search"), calls),
                () -> assertTrue(authorizations.size() >= 3, () -> "initialize, list and call: " + authorizations),
                () -> assertTrue(
                        authorizations.stream().allMatch(("Bearer " + REAL)::equals),
                        () -> "every request should carry the real value: " + shown(authorizations)),
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
        startProxy(new Target(HOST, HostKind.DNS, port + 1 == 65536 ? port - 1 : port + 1));

        client.initialize();
        client.callTool(new McpSchema.CallToolRequest("search", Map.of("q", "x")));

        await("tools/call");
        assertAll(
                () -> assertEquals(List.of("search"), calls),
                () -> assertFalse(authorizations.isEmpty(), "the server saw no request"),
                () -> assertTrue(
                        authorizations.stream().noneMatch(a -> a.contains(REAL) || a.contains(PLACEHOLDER)),
                        () -> "the placeholder must be redacted, not swapped: " + shown(authorizations)),
                () -> assertTrue(
                        authorizations.stream().allMatch(a -> a.startsWith("Bearer [REDACTED")),
                        () -> "a redaction marker: " + shown(authorizations)));
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
        Policy policy = PolicyLoader.parse(POLICY.formatted(HOST, port), "test-policy.yaml");
        InjectedCredential credential = new InjectedCredential(
                new CredentialRule(ENV, null, List.of(credentialHost), "authorization"), PLACEHOLDER, REAL);
        proxy = new ProxyServer(new ProxyConfig(
                policy.network(),
                "test-session",
                audit,
                new StubResolver(),
                HttpLimits.defaults(),
                Timeouts.defaults(),
                Clock.systemUTC(),
                2,
                tls.interception(),
                new Inspection(policy.redaction(), Map.of(), List.of(credential)),
                policy.mcp(),
                Map.of()));
        InetSocketAddress address = proxy.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        HttpClient.Builder http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(McpProxy.WAIT)
                .proxy(ProxySelector.of(address))
                .sslContext(TestTls.clientTrusting(tls.proxyCa().certificate()));
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(
                        "https://" + HOST + ":" + port)
                .endpoint("/mcp")
                .clientBuilder(http)
                .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + PLACEHOLDER))
                .build();
        client = McpClient.sync(transport).requestTimeout(McpProxy.WAIT).build();
    }

    private AuditRecord await(String method) throws InterruptedException {
        RecordingUpstream.await(() -> find(method) != null, McpProxy.WAIT);
        AuditRecord r = find(method);
        assertTrue(r != null, () -> "no record of " + method + " in " + auditLog());
        return r;
    }

    private AuditRecord find(String method) {
        return audit.records().stream()
                .filter(r -> r.mcp() != null && method.equals(r.mcp().method()))
                .findFirst()
                .orElse(null);
    }

    private String auditLog() {
        StringBuilder out = new StringBuilder();
        for (AuditRecord r : audit.records()) {
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

    /**
     * Starts the SDK's Streamable HTTP server on Tomcat, HTTPS on 127.0.0.1 with a leaf for {@value #HOST} from the
     * upstream CA the proxy trusts, noting the {@code Authorization} of every request; returns the port.
     */
    private int serve() throws Exception {
        McpJsonMapper json = McpJsonDefaults.getMapper();
        HttpServletStreamableServerTransportProvider transport = HttpServletStreamableServerTransportProvider.builder()
                .mcpEndpoint("/mcp")
                .build();
        McpServer.StreamableSyncSpecification spec = McpServer.sync(transport);
        spec.serverInfo("agentjail-test", "1.0");
        spec.capabilities(McpSchema.ServerCapabilities.builder().tools(true).build());
        for (String name : List.of("search", "read_doc", "delete_repo")) {
            spec.tools(McpServerFeatures.SyncToolSpecification.builder()
                    .tool(McpSchema.Tool.builder()
                            .name(name)
                            .description("Finds " + name)
                            .inputSchema(json, McpTestServer.SCHEMA)
                            .build())
                    .callHandler((exchange, request) -> {
                        calls.add(request.name());
                        return McpSchema.CallToolResult.builder()
                                .addTextContent("ran " + request.name())
                                .build();
                    })
                    .build());
        }
        mcp = spec.build();

        LeafCertificate leaf = new LeafCertificates(
                        tls.upstreamCa(), Clock.systemUTC(), minting, Duration.ofHours(24), 10)
                .forHost(HOST)
                .get();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("leaf", leaf.key(), KEY_PASSWORD.toCharArray(), leaf.chain());
        tomcat.setBaseDir(dir.resolve("tomcat").toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        connector.setScheme("https");
        connector.setSecure(true);
        connector.setProperty("SSLEnabled", "true");
        SSLHostConfig host = new SSLHostConfig();
        SSLHostConfigCertificate certificate =
                new SSLHostConfigCertificate(host, SSLHostConfigCertificate.Type.UNDEFINED);
        certificate.setCertificateKeystore(keys);
        certificate.setCertificateKeystorePassword(KEY_PASSWORD);
        certificate.setCertificateKeyPassword(KEY_PASSWORD);
        host.addCertificate(certificate);
        connector.addSslHostConfig(host);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", dir.toString());
        Wrapper wrapper = Tomcat.addServlet(context, "mcp", new NotingAuthorization(transport, authorizations));
        wrapper.setAsyncSupported(true);
        context.addServletMappingDecoded("/*", "mcp");
        tomcat.start();
        return connector.getLocalPort();
    }

    /** Notes each request's {@code Authorization} header, then hands the request to the SDK's servlet. */
    private static final class NotingAuthorization extends HttpServlet {
        private final transient HttpServlet delegate;
        private final transient List<String> seen;

        NotingAuthorization(HttpServlet delegate, List<String> seen) {
            this.delegate = delegate;
            this.seen = seen;
        }

        @Override
        public void init(ServletConfig config) throws ServletException {
            super.init(config);
            delegate.init(config);
        }

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response)
                throws ServletException, IOException {
            seen.add(String.valueOf(request.getHeader("Authorization")));
            delegate.service(request, response);
        }
    }
}
