package dev.agentjail.proxy.mcp.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.ProxyServer;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.mcp.McpErrors;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.StubResolver;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host-side stdio MCP server (the official Java SDK's, in its own JVM) reached through the proxy at {@code
 * http://docs.mcp.agentjail.internal/mcp} by the SDK's Streamable HTTP client: the same inspection as a remote server,
 * credentials from the host environment that stay on the host, and a process per session that ends with it.
 */
@ExtendWith(NettyLeakGuard.class)
class HostBridgeTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** A synthetic value standing for a credential in the host environment. */
    private static final String SECRET = "hostcred-" + "Zq8Xv2Lm5Np7Rt4Wy1";

    @TempDir
    Path dir;

    private final MemoryAuditSink audit = new MemoryAuditSink();
    private ProxyServer proxy;
    private InetSocketAddress address;
    private McpSyncClient client;

    @AfterEach
    void tearDown() {
        if (client != null) {
            try {
                client.close();
            } catch (RuntimeException e) {
                // Already broken by the test (the server crashed).
            }
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    private Path calls() {
        return dir.resolve("calls.txt");
    }

    private void start(Map<String, String> serverEnv) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        McpServer docs = new McpServer(
                "docs",
                Optional.empty(),
                List.of(java, "-cp", System.getProperty("java.class.path"), StdioTestServer.class.getName()),
                serverEnv,
                new NameFilter(List.of("search", "token_sha", "env_names", "pid", "crash"), List.of("delete_*")),
                NameFilter.none(),
                NameFilter.none(),
                false,
                false);
        Map<String, String> hostEnv = Map.of(
                "PATH",
                System.getenv().getOrDefault("PATH", "/usr/bin:/bin"),
                "HOME",
                dir.toString(),
                "SOURCE_TOKEN",
                SECRET,
                "UNRELATED",
                "not for the server");
        proxy = new ProxyServer(new ProxyConfig(
                NetworkPolicy.none(),
                "test-session",
                audit,
                new StubResolver(),
                HttpLimits.defaults(),
                Timeouts.defaults(),
                Clock.systemUTC(),
                2,
                null,
                Inspection.defaults(),
                new McpPolicy(List.of(docs)),
                hostEnv));
        address = proxy.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    private void start() throws Exception {
        start(Map.of("API_TOKEN", "${SOURCE_TOKEN}", "CALLS_FILE", calls().toString()));
    }

    private HttpClient.Builder http() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(WAIT)
                .proxy(ProxySelector.of(address));
    }

    private McpSyncClient connect() {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(
                        "http://" + HostEndpoints.host("docs"))
                .endpoint(HostEndpoints.PATH)
                .clientBuilder(http())
                .build();
        client = McpClient.sync(transport).requestTimeout(WAIT).build();
        client.initialize();
        return client;
    }

    private static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().getFirst()).text();
    }

    private static String call(McpSyncClient c, String tool) {
        return text(c.callTool(new McpSchema.CallToolRequest(tool, Map.of())));
    }

    private static void awaitGone(long pid) throws InterruptedException {
        RecordingUpstream.await(
                () -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true), WAIT);
        assertTrue(ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true), "process " + pid + " still running");
    }

    @Test
    void approvedCallsWorkAndUnapprovedToolsNeverReachTheProcess() throws Exception {
        start();
        McpSyncClient c = connect();

        List<String> tools = c.listTools().tools().stream()
                .map(McpSchema.Tool::name)
                .sorted()
                .toList();
        assertEquals(List.of("crash", "env_names", "pid", "search", "token_sha"), tools);
        assertEquals("ran search", call(c, "search"));

        McpError denied = assertThrows(McpError.class, () -> call(c, "delete_repo"));
        assertEquals(McpErrors.TOOL_NOT_APPROVED, denied.getJsonRpcError().code());
        assertEquals(List.of("search"), Files.readAllLines(calls()));

        AuditRecord record = audit.records().stream()
                .filter(r -> r.mcp() != null && "delete_repo".equals(r.mcp().tool()))
                .findFirst()
                .orElseThrow();
        assertEquals(AuditRecord.DENY, record.decision());
        assertEquals("docs", record.mcp().server());
        assertEquals("mcp.servers[docs].tools", record.rule());
    }

    @Test
    void theHostCredentialReachesTheProcessButNeverTheClient() throws Exception {
        start();
        McpSyncClient c = connect();

        String expected = HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(SECRET.getBytes(StandardCharsets.UTF_8)));
        assertEquals(expected, call(c, "token_sha"));
        // A minimal environment: the host's other variables (the referenced one included) stay out.
        assertEquals("API_TOKEN,CALLS_FILE,HOME,PATH", call(c, "env_names"));
        for (AuditRecord r : audit.records()) {
            assertFalse(AuditJson.toLine(r).contains(SECRET), "secret in a record");
        }
    }

    @Test
    void deleteEndsTheSessionAndItsProcess() throws Exception {
        start();
        HttpClient http = http().build();
        URI url = HostEndpoints.url("docs");
        HttpResponse<String> init = http.send(post(url, null, """
                        {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",\
                        "capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"""), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, init.statusCode(), init.body());
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertTrue(session.length() >= 40, session);
        HttpResponse<String> initialized = http.send(
                post(url, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(202, initialized.statusCode());
        HttpResponse<String> pid = http.send(post(url, session, """
                        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pid","arguments":{}}}"""), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, pid.statusCode(), pid.body());
        List<Long> pids = proxy.hostBridge().pids("docs");
        assertEquals(1, pids.size());
        assertTrue(pid.body().contains(Long.toString(pids.getFirst())), pid.body());

        HttpResponse<String> deleted = http.send(
                HttpRequest.newBuilder(url)
                        .header("Mcp-Session-Id", session)
                        .DELETE()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, deleted.statusCode());

        awaitGone(pids.getFirst());
        HttpResponse<String> after = http.send(
                post(url, session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}"),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, after.statusCode());
    }

    private static HttpRequest post(URI url, String session, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            b.header("Mcp-Session-Id", session).header("MCP-Protocol-Version", "2025-06-18");
        }
        return b.build();
    }

    @Test
    void shutdownStopsTheProcess() throws Exception {
        start();
        McpSyncClient c = connect();
        long pid = Long.parseLong(call(c, "pid"));
        assertTrue(ProcessHandle.of(pid).isPresent());

        proxy.close();
        proxy = null;

        awaitGone(pid);
    }

    @Test
    void aCrashAnswersTheCallWithAnErrorAndEndsTheSession() throws Exception {
        start();
        McpSyncClient c = connect();
        long pid = Long.parseLong(call(c, "pid"));

        McpError crashed = assertThrows(McpError.class, () -> call(c, "crash"));
        assertEquals(HostErrors.EXITED, crashed.getJsonRpcError().code());
        assertEquals("'docs': the host-side MCP server exited with status 3", crashed.getMessage());
        awaitGone(pid);
        assertEquals(List.of(), proxy.hostBridge().pids("docs"));
    }

    @Test
    void aMissingHostVariableIsAClearErrorNamingIt() throws Exception {
        start(Map.of("API_TOKEN", "${NOT_SET_ANYWHERE}"));

        Exception e = assertThrows(Exception.class, this::connect);

        Throwable t = e;
        while (t != null && !(t instanceof McpError)) {
            t = t.getCause();
        }
        assertNotNull(t, () -> "no McpError in " + e);
        McpError error = (McpError) t;
        assertEquals(HostErrors.UNAVAILABLE, error.getJsonRpcError().code());
        assertEquals(
                "'docs': mcp.servers[docs].env.API_TOKEN needs the host variable NOT_SET_ANYWHERE, which is not set"
                        + " in agentjail's environment",
                error.getMessage());
        assertEquals(List.of(), proxy.hostBridge().pids("docs"));
    }
}
