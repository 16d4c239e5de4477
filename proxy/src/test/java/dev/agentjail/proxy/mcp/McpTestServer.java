package dev.agentjail.proxy.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpStatelessSyncServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * A real MCP server from the official Java SDK on embedded Tomcat at {@code 127.0.0.1:<port>/mcp}: Streamable HTTP
 * (answers as event streams) or stateless (answers as JSON). Tools {@code search}, {@code read_doc} and {@code
 * delete_repo}; every call that reaches it is kept, with its arguments, for the tests to assert on.
 */
final class McpTestServer implements AutoCloseable {
    static final String SCHEMA = """
            {"type":"object","properties":{"q":{"type":"string"}}}""";

    static final String KEY_PASSWORD = "test-password";

    /** One tool call as the server received it. */
    record Call(String tool, Map<String, Object> arguments) {}

    final List<Call> calls = new CopyOnWriteArrayList<>();
    /** Every HTTP request that reached the server. */
    final java.util.concurrent.atomic.AtomicInteger requests = new java.util.concurrent.atomic.AtomicInteger();
    /** The {@code Mcp-Session-Id} of every request that reached the server with one, in order. */
    final List<String> sessionIds = new CopyOnWriteArrayList<>();
    /** The {@code Authorization} header of every request that reached the server ("null" when absent). */
    final List<String> authorizations = new CopyOnWriteArrayList<>();

    private final Tomcat tomcat;
    private final McpSyncServer streamable;
    private final McpStatelessSyncServer stateless;
    private final int port;
    private final McpJsonMapper json = McpJsonDefaults.getMapper();
    /**
     * Held while a legacy server writes on its session stream. The SDK's legacy transport writes each answer on the
     * stream from the thread that handled the POST, and each notification from the thread that caused it, with no
     * lock of its own; Tomcat's writer is not thread-safe, so two answers at once (the client's own tools/list after
     * a list_changed, racing the test's) could interleave and break the stream's chunked framing, which the proxy
     * then rightly cuts. Serialising here keeps the server a correct one.
     */
    private final Object streamWrites = new Object();

    private final boolean serialisePosts;

    private McpTestServer(Path base, boolean streaming) throws Exception {
        this(base, streaming, null);
    }

    /**
     * The legacy HTTP+SSE transport (2024-11-05): {@code GET /sse}, then {@code POST /mcp/message?sessionId=…}; the
     * {@code endpoint} event names {@code <baseUrl>/mcp/message?sessionId=…} (relative when {@code baseUrl} is empty).
     */
    private McpTestServer(Path base, String baseUrl) throws Exception {
        io.modelcontextprotocol.server.transport.HttpServletSseServerTransportProvider transport =
                io.modelcontextprotocol.server.transport.HttpServletSseServerTransportProvider.builder()
                        .baseUrl(baseUrl)
                        .sseEndpoint("/sse")
                        .messageEndpoint("/mcp/message")
                        .build();
        McpServer.SingleSessionSyncSpecification spec = McpServer.sync(transport);
        spec.serverInfo("agentjail-test", "1.0");
        spec.capabilities(McpSchema.ServerCapabilities.builder().tools(true).build());
        for (String name : List.of("search", "read_doc", "delete_repo")) {
            spec.tools(streamingTool(name, "Finds " + name));
        }
        streamable = spec.build();
        stateless = null;
        serialisePosts = true;
        tomcat = new Tomcat();
        port = serve(base, transport, null);
    }

    /** A server on the legacy HTTP+SSE transport. */
    static McpTestServer legacy(Path base) throws Exception {
        return new McpTestServer(base, "");
    }

    /** A server on the legacy HTTP+SSE transport whose {@code endpoint} event is absolute, under {@code baseUrl}. */
    static McpTestServer legacy(Path base, String baseUrl) throws Exception {
        return new McpTestServer(base, baseUrl);
    }

    /** {@code keyStore} (one key entry, password {@value #KEY_PASSWORD}): serve HTTPS with it; null: plain HTTP. */
    private McpTestServer(Path base, boolean streaming, java.security.KeyStore keyStore) throws Exception {
        HttpServlet servlet;
        if (streaming) {
            HttpServletStreamableServerTransportProvider transport =
                    HttpServletStreamableServerTransportProvider.builder()
                            .mcpEndpoint("/mcp")
                            .build();
            McpServer.StreamableSyncSpecification spec = McpServer.sync(transport);
            spec.serverInfo("agentjail-test", "1.0");
            spec.capabilities(McpSchema.ServerCapabilities.builder().tools(true).build());
            for (String name : List.of("search", "read_doc", "delete_repo")) {
                spec.tools(streamingTool(name, "Finds " + name));
            }
            streamable = spec.build();
            stateless = null;
            servlet = transport;
        } else {
            HttpServletStatelessServerTransport transport = HttpServletStatelessServerTransport.builder()
                    .messageEndpoint("/mcp")
                    .build();
            McpServer.StatelessSyncSpecification spec = McpServer.sync(transport)
                    .serverInfo("agentjail-test", "1.0")
                    .capabilities(
                            McpSchema.ServerCapabilities.builder().tools(true).build());
            for (String name : List.of("search", "read_doc", "delete_repo")) {
                spec.toolCall(tool(name, "Finds " + name), (ctx, req) -> answer(req));
            }
            stateless = spec.build();
            streamable = null;
            servlet = transport;
        }
        serialisePosts = false;
        tomcat = new Tomcat();
        port = serve(base, servlet, keyStore);
    }

    /** Starts Tomcat on 127.0.0.1, port 0, with {@code servlet} at every path; returns the port. */
    private int serve(Path base, HttpServlet servlet, java.security.KeyStore keyStore) throws Exception {
        tomcat.setBaseDir(base.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        if (keyStore != null) {
            connector.setScheme("https");
            connector.setSecure(true);
            connector.setProperty("SSLEnabled", "true");
            org.apache.tomcat.util.net.SSLHostConfig host = new org.apache.tomcat.util.net.SSLHostConfig();
            org.apache.tomcat.util.net.SSLHostConfigCertificate certificate =
                    new org.apache.tomcat.util.net.SSLHostConfigCertificate(
                            host, org.apache.tomcat.util.net.SSLHostConfigCertificate.Type.UNDEFINED);
            certificate.setCertificateKeystore(keyStore);
            certificate.setCertificateKeystorePassword(KEY_PASSWORD);
            certificate.setCertificateKeyPassword(KEY_PASSWORD);
            host.addCertificate(certificate);
            connector.addSslHostConfig(host);
        }
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", base.toString());
        HttpServlet delegate = servlet;
        HttpServlet counting = new HttpServlet() {
            @Override
            protected void service(
                    jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse res)
                    throws jakarta.servlet.ServletException, java.io.IOException {
                requests.incrementAndGet();
                authorizations.add(String.valueOf(req.getHeader("Authorization")));
                String session = req.getHeader("Mcp-Session-Id");
                if (session != null) {
                    sessionIds.add(session);
                }
                if (serialisePosts && "POST".equals(req.getMethod())) {
                    synchronized (streamWrites) {
                        delegate.service(req, res);
                    }
                } else {
                    delegate.service(req, res);
                }
            }

            @Override
            public void init(jakarta.servlet.ServletConfig config) throws jakarta.servlet.ServletException {
                super.init(config);
                delegate.init(config);
            }
        };
        Wrapper wrapper = Tomcat.addServlet(context, "mcp", counting);
        wrapper.setAsyncSupported(true);
        context.addServletMappingDecoded("/*", "mcp");
        tomcat.start();
        return connector.getLocalPort();
    }

    /** A Streamable HTTP server (event-stream answers). */
    static McpTestServer streamable(Path base) throws Exception {
        return new McpTestServer(base, true);
    }

    /** A Streamable HTTP server over HTTPS with the key and certificate in {@code keyStore}. */
    static McpTestServer streamableTls(Path base, java.security.KeyStore keyStore) throws Exception {
        return new McpTestServer(base, true, keyStore);
    }

    /** A stateless server (JSON answers). */
    static McpTestServer stateless(Path base) throws Exception {
        return new McpTestServer(base, false);
    }

    int port() {
        return port;
    }

    /** Replaces {@code name}'s definition with one whose description differs: a rug pull. */
    void changeDescription(String name, String description) {
        synchronized (streamWrites) {
            streamable.removeTool(name);
            streamable.addTool(streamingTool(name, description));
        }
    }

    private McpSchema.Tool tool(String name, String description) {
        return McpSchema.Tool.builder()
                .name(name)
                .description(description)
                .inputSchema(json, SCHEMA)
                .build();
    }

    private McpServerFeatures.SyncToolSpecification streamingTool(String name, String description) {
        return McpServerFeatures.SyncToolSpecification.builder()
                .tool(tool(name, description))
                .callHandler((exchange, req) -> answer(req))
                .build();
    }

    private McpSchema.CallToolResult answer(McpSchema.CallToolRequest req) {
        calls.add(new Call(req.name(), req.arguments()));
        return McpSchema.CallToolResult.builder()
                .addTextContent("ran " + req.name())
                .build();
    }

    @Override
    public void close() throws Exception {
        if (streamable != null) {
            streamable.closeGracefully();
        }
        if (stateless != null) {
            stateless.closeGracefully();
        }
        tomcat.stop();
        tomcat.destroy();
    }
}
