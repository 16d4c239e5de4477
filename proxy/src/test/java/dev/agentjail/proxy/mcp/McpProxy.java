package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.ProxyServer;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.StubResolver;
import dev.agentjail.proxy.tls.Interception;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;

/**
 * A proxy on loopback whose policy approves one MCP server, {@code docs} at {@code http://mcp.test:<port>/mcp}
 * (tools {@code search*} and {@code read_doc}, {@code delete_*} denied), and also allows {@code other.test} on the same
 * port, a web host that is not an approved MCP server. Both names lead to 127.0.0.1.
 */
final class McpProxy implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(10);

    private static final String POLICY = """
            version: 1
            network:
              allow: ["mcp.test:%1$d", "other.test:%1$d"]
              resolve: {mcp.test: 127.0.0.1, other.test: 127.0.0.1}
            mcp:
              servers:
                - name: docs
                  url: http://mcp.test:%1$d/mcp
                  tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
            """;

    /** A JSON-RPC result, as an MCP server answers a request (its id does not matter to the proxy). */
    static final String RESULT_BODY = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";

    /** {@link #RESULT_BODY} as a 200 {@code application/json} answer. */
    static final String RESULT = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + RESULT_BODY.length() + "\r\n\r\n" + RESULT_BODY;

    /** An event stream with one comment and nothing else, as a server's GET stream may start. */
    static final String EMPTY_STREAM =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 6\r\n\r\n: ok\n\n";

    /**
     * What a well-behaved MCP server answers {@code r} with: a POST gets {@link #RESULT}, a GET {@link #EMPTY_STREAM},
     * anything else an empty 200. Clients read no MCP message from a body of another type, so the proxy refuses one.
     */
    static String answer(RecordingUpstream.RecordedRequest r) {
        String line = r.requestLine();
        if (line.startsWith("POST ")) {
            return RESULT;
        }
        return line.startsWith("GET ") ? EMPTY_STREAM : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    }

    final MemoryAuditSink audit = new MemoryAuditSink();
    final ProxyServer server;
    final InetSocketAddress address;

    McpProxy(int upstreamPort) throws Exception {
        this(POLICY.formatted(upstreamPort), Map.of());
    }

    McpProxy(String policyYaml, Map<String, String> knownValues) throws Exception {
        this(policyYaml, knownValues, null);
    }

    /** A proxy with its own policy that intercepts allowed CONNECTs with {@code interception} (null: tunnels). */
    McpProxy(String policyYaml, Map<String, String> knownValues, Interception interception) throws Exception {
        this(policyYaml, knownValues, interception, List.of());
    }

    /** As above, injecting {@code credentials} into the requests they apply to. */
    McpProxy(
            String policyYaml,
            Map<String, String> knownValues,
            Interception interception,
            List<dev.agentjail.proxy.inspect.InjectedCredential> credentials)
            throws Exception {
        Policy policy = PolicyLoader.parse(policyYaml, "test-policy.yaml");
        server = new ProxyServer(new ProxyConfig(
                policy.network(),
                "test-session",
                audit,
                new StubResolver(),
                HttpLimits.defaults(),
                Timeouts.defaults(),
                Clock.systemUTC(),
                2,
                interception,
                new Inspection(policy.redaction(), knownValues, credentials),
                policy.mcp(),
                Map.of()));
        address = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    /** An SDK client for {@code http://<host>:<port>/mcp} that goes through this proxy. */
    McpSyncClient client(String host, int port) {
        return client("http://" + host + ":" + port, null);
    }

    /** An SDK client for {@code <base>/mcp} through this proxy; {@code tls}: the client's trust (for https). */
    McpSyncClient client(String base, SSLContext tls) {
        return client(base, tls, spec -> spec);
    }

    /** As above, with the client's specification (capabilities, handlers) completed by {@code spec}. */
    McpSyncClient client(String base, SSLContext tls, java.util.function.UnaryOperator<McpClient.SyncSpec> spec) {
        HttpClient.Builder http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(WAIT)
                .proxy(ProxySelector.of(address));
        if (tls != null) {
            http.sslContext(tls);
        }
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(base)
                .endpoint("/mcp")
                .clientBuilder(http)
                .build();
        return spec.apply(McpClient.sync(transport).requestTimeout(WAIT)).build();
    }

    /** An SDK client on the legacy HTTP+SSE transport ({@code GET /sse}) through this proxy. */
    McpSyncClient legacyClient(String host, int port) {
        io.modelcontextprotocol.client.transport.HttpClientSseClientTransport transport =
                io.modelcontextprotocol.client.transport.HttpClientSseClientTransport.builder(
                                "http://" + host + ":" + port)
                        .sseEndpoint("/sse")
                        .clientBuilder(HttpClient.newBuilder()
                                .version(HttpClient.Version.HTTP_1_1)
                                .connectTimeout(WAIT)
                                .proxy(ProxySelector.of(address)))
                        .build();
        return McpClient.sync(transport).requestTimeout(Duration.ofSeconds(3)).build();
    }

    /** The request records so far. */
    List<AuditRecord> records() {
        return audit.records().stream()
                .filter(r -> AuditRecord.KIND_REQUEST.equals(r.kind()))
                .toList();
    }

    /** Waits for a request record with MCP method {@code method} and, if not null, tool {@code tool}. */
    AuditRecord await(String method, String tool) throws InterruptedException {
        RecordingUpstream.await(() -> find(method, tool) != null, WAIT);
        AuditRecord r = find(method, tool);
        if (r == null) {
            throw new AssertionError("no record for " + method + " " + tool + " in " + records());
        }
        return r;
    }

    private AuditRecord find(String method, String tool) {
        return records().stream()
                .filter(r -> r.mcp() != null && method.equals(r.mcp().method()))
                .filter(r -> tool == null || tool.equals(r.mcp().tool()))
                .reduce((a, b) -> b)
                .orElse(null);
    }

    @Override
    public void close() {
        server.close();
    }
}
