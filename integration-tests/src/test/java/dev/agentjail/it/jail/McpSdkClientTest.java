package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.mcp.McpErrors;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MCP TypeScript SDK's client ({@code @modelcontextprotocol/sdk} at the version pinned in {@code .ci/agents}, on
 * the Node.js that .ci/run installs, whose fetch follows the jail's proxy variables) in the jail, talking Streamable
 * HTTP to an approved MCP server on the host's loopback ({@link McpUpstream}, the Java SDK's server) with a bearer
 * token the policy injects: it lists only the approved tools, calls one, and gets the proxy's JSON-RPC error for an
 * unapproved one.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class McpSdkClientTest {
    static final String PACKAGE = "@modelcontextprotocol/sdk";
    static final String VARIABLE = "DOCS_MCP_TOKEN";
    static final String REAL = "real-mcp-token-2b8d4f6a0c9e1357";

    /** The client: connect, list, call an approved tool, call an unapproved one; one {@code name=value} line each. */
    static final String CLIENT = """
            const sdk = process.argv[2];
            const { Client } = await import(sdk + "/dist/esm/client/index.js");
            const { StreamableHTTPClientTransport } = await import(sdk + "/dist/esm/client/streamableHttp.js");
            const transport = new StreamableHTTPClientTransport(new URL(process.argv[3]), {
              requestInit: { headers: { Authorization: "Bearer " + process.env.DOCS_MCP_TOKEN } },
            });
            const client = new Client({ name: "agentjail-it", version: "1.0.0" });
            await client.connect(transport);
            console.log("server=" + client.getServerVersion().name);
            const { tools } = await client.listTools();
            console.log("tools=" + tools.map((t) => t.name).sort().join(","));
            const result = await client.callTool({ name: "search", arguments: { q: "jail" } });
            console.log("call=" + result.content.map((c) => c.text).join(""));
            try {
              await client.callTool({ name: "delete_repo", arguments: {} });
              console.log("deny=none");
            } catch (e) {
              console.log("deny=" + e.code + " " + e.message);
            }
            await client.close();
            """;

    static McpUpstream server;
    static TestTls tls;

    @TempDir
    static Path serverDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startServer() throws Exception {
        tls = TestTls.create(Files.createDirectories(serverDir.resolve("tls")));
        server = McpUpstream.streamable(Files.createDirectories(serverDir.resolve("docs")), tls);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void theSdkClientUsesAnApprovedServerThroughTheProxy() throws Exception {
        RealAgents.Installed sdk = RealAgents.require(PACKAGE, null);
        AgentjailRun run = AgentjailRun.in(dir).env(VARIABLE, REAL).policy(policy());
        Path client = Files.writeString(run.project().resolve("client.mjs"), CLIENT);

        AgentjailRun.Outcome o = run.run(RealAgents.probed(
                        List.of(VARIABLE),
                        List.of(
                                RealAgents.MODERN_NODE_BIN.resolve("node").toString(),
                                client.toString(),
                                sdk.packageDir().toString(),
                                server.url()))
                .toArray(String[]::new));

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("agentjail-it", o.probe("server"), o::describe);
        assertEquals("read_doc,search", o.probe("tools"), o::describe);
        assertEquals("ran search", o.probe("call"), o::describe);
        String deny = o.probe("deny");
        assertTrue(deny.startsWith(McpErrors.TOOL_NOT_APPROVED + " "), deny);
        assertEquals(
                List.of("search"),
                server.calls().stream().map(McpUpstream.Call::tool).toList());
        String placeholder = RealAgents.seen(o, VARIABLE);
        assertTrue(placeholder.matches(RealAgents.PLACEHOLDER), placeholder);

        List<String> authorizations = server.authorizations();
        assertFalse(authorizations.isEmpty(), o::describe);
        authorizations.forEach(a -> assertEquals("Bearer " + REAL, a, "the server must get the real token"));
        List<JsonNode> forwarded = o.records(AuditRecord.KIND_REQUEST).stream()
                .filter(r -> TestTls.HOST.equals(r.path("host").asText()))
                // Denied requests never reach the upstream; one that ended in an error (a stream the client closed)
                // did.
                .filter(r -> !AuditRecord.DENY.equals(r.path("decision").asText()))
                .filter(r -> !"CONNECT".equals(r.path("method").asText()))
                .toList();
        assertEquals(
                server.paths().size(),
                forwarded.size(),
                () -> "one audit record per request the server saw; server: " + server.paths() + ", log: " + forwarded);
        String log = new String(AuditLines.bytes(o.auditLog()), StandardCharsets.UTF_8);
        assertFalse(o.out().contains(REAL), "the real token reached the jail's output");
        assertFalse(o.err().contains(REAL), "the real token is in the launcher's output");
        assertFalse(log.contains(REAL), "the real token is in the audit log");
        Command.Result verify = run.cli("log", "verify", o.auditLog().toString());
        assertEquals(0, verify.exitCode(), () -> "agentjail log verify: " + verify.describe());
    }

    private static String policy() {
        return """
                version: 1
                network:
                  allow: ["%1$s:%2$d"]
                  resolve: {%1$s: 127.0.0.1}
                tls:
                  upstream_ca: ["%3$s"]
                mcp:
                  servers:
                    - name: docs
                      url: %4$s
                      tools: {allow: ["search*", read_doc]}
                credentials:
                  - env: %5$s
                    hosts: ["%1$s:%2$d"]
                    header: authorization
                """.formatted(TestTls.HOST, server.port(), tls.certificatePem(), server.url(), VARIABLE);
    }
}
