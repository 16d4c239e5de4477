package dev.agentjail.it.jail;

import dev.agentjail.it.support.TestTls;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpStatelessSyncServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;

/**
 * A real MCP server from the official Java SDK on embedded Tomcat, HTTPS on {@code 127.0.0.1} with the self-signed
 * certificate of {@link TestTls} (which the proxy trusts through the policy's {@code tls.upstream_ca}), its endpoint at
 * {@value #ENDPOINT}. Streamable HTTP (answers as event streams) or stateless (answers as JSON). It offers the tools
 * {@link #TOOLS} and keeps every call that reaches it, and the path of every HTTP request.
 */
final class McpUpstream implements AutoCloseable {
    static final String ENDPOINT = "/mcp";

    /** {@code search} and {@code read_doc} are what the tests' policies approve; {@code delete_repo} is denied. */
    static final List<String> TOOLS = List.of("search", "read_doc", "delete_repo");

    private static final String SCHEMA = """
            {"type":"object","properties":{"q":{"type":"string"},"note":{"type":"string"}}}""";

    /** One tool call as the server received it. */
    record Call(String tool, Map<String, Object> arguments) {}

    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final List<String> paths = new CopyOnWriteArrayList<>();
    private final McpJsonMapper json = McpJsonDefaults.getMapper();
    private final Tomcat tomcat = new Tomcat();
    private final McpSyncServer streamable;
    private final McpStatelessSyncServer stateless;
    private final int port;

    private McpUpstream(Path base, TestTls tls, boolean streaming) throws Exception {
        HttpServlet servlet;
        if (streaming) {
            HttpServletStreamableServerTransportProvider transport =
                    HttpServletStreamableServerTransportProvider.builder()
                            .mcpEndpoint(ENDPOINT)
                            .build();
            McpServer.StreamableSyncSpecification spec = McpServer.sync(transport);
            spec.serverInfo("agentjail-it", "1.0");
            spec.capabilities(McpSchema.ServerCapabilities.builder().tools(true).build());
            for (String name : TOOLS) {
                spec.tools(McpServerFeatures.SyncToolSpecification.builder()
                        .tool(tool(name))
                        .callHandler((exchange, request) -> answer(request))
                        .build());
            }
            streamable = spec.build();
            stateless = null;
            servlet = transport;
        } else {
            HttpServletStatelessServerTransport transport = HttpServletStatelessServerTransport.builder()
                    .messageEndpoint(ENDPOINT)
                    .build();
            McpServer.StatelessSyncSpecification spec = McpServer.sync(transport)
                    .serverInfo("agentjail-it", "1.0")
                    .capabilities(
                            McpSchema.ServerCapabilities.builder().tools(true).build());
            for (String name : TOOLS) {
                spec.toolCall(tool(name), (context, request) -> answer(request));
            }
            stateless = spec.build();
            streamable = null;
            servlet = transport;
        }
        port = serve(base, tls, servlet);
    }

    /** A Streamable HTTP server (event-stream answers) under {@code base} (Tomcat's work directory). */
    static McpUpstream streamable(Path base, TestTls tls) throws Exception {
        return new McpUpstream(base, tls, true);
    }

    /** A stateless server (JSON answers). */
    static McpUpstream stateless(Path base, TestTls tls) throws Exception {
        return new McpUpstream(base, tls, false);
    }

    int port() {
        return port;
    }

    /** {@code https://upstream.test:PORT/mcp}, the URL a policy approves. */
    String url() {
        return "https://" + TestTls.HOST + ":" + port + ENDPOINT;
    }

    /** The tool calls that reached the server, in order. */
    List<Call> calls() {
        return List.copyOf(calls);
    }

    /** The path of every HTTP request that reached the server, in order. */
    List<String> paths() {
        return List.copyOf(paths);
    }

    private McpSchema.Tool tool(String name) {
        return McpSchema.Tool.builder()
                .name(name)
                .description("Runs " + name + " over the test documents")
                .inputSchema(json, SCHEMA)
                .build();
    }

    private McpSchema.CallToolResult answer(McpSchema.CallToolRequest request) {
        calls.add(new Call(request.name(), request.arguments()));
        return McpSchema.CallToolResult.builder()
                .addTextContent("ran " + request.name())
                .build();
    }

    /** Starts Tomcat on 127.0.0.1, port 0, HTTPS, with {@code servlet} at every path; returns the port. */
    private int serve(Path base, TestTls tls, HttpServlet servlet) throws Exception {
        tomcat.setBaseDir(base.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        connector.setScheme("https");
        connector.setSecure(true);
        connector.setProperty("SSLEnabled", "true");
        SSLHostConfig host = new SSLHostConfig();
        SSLHostConfigCertificate certificate =
                new SSLHostConfigCertificate(host, SSLHostConfigCertificate.Type.UNDEFINED);
        certificate.setCertificateKeystoreFile(tls.keystore().toString());
        certificate.setCertificateKeystoreType("PKCS12");
        certificate.setCertificateKeystorePassword(TestTls.PASSWORD);
        certificate.setCertificateKeyPassword(TestTls.PASSWORD);
        host.addCertificate(certificate);
        connector.addSslHostConfig(host);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", base.toString());
        Wrapper wrapper = Tomcat.addServlet(context, "mcp", new Recording(servlet, paths));
        wrapper.setAsyncSupported(true);
        context.addServletMappingDecoded("/*", "mcp");
        tomcat.start();
        return connector.getLocalPort();
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

    /** Notes each request's path, then hands it to the SDK's servlet. */
    private static final class Recording extends HttpServlet {
        private final transient HttpServlet delegate;
        private final transient List<String> paths;

        Recording(HttpServlet delegate, List<String> paths) {
            this.delegate = delegate;
            this.paths = paths;
        }

        @Override
        public void init(ServletConfig config) throws ServletException {
            super.init(config);
            delegate.init(config);
        }

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response)
                throws ServletException, IOException {
            paths.add(request.getRequestURI());
            delegate.service(request, response);
        }
    }
}
