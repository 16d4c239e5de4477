package dev.agentjail.proxy.mcp.host;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * A real stdio MCP server from the official Java SDK, run by the tests as a host-side server in its own JVM. Every
 * tool call that reaches it is appended to the file named by {@code CALLS_FILE}. Tools: {@code search}, {@code
 * delete_repo}, {@code token_sha} (SHA-256 of {@code API_TOKEN}), {@code env_names}, {@code pid}, {@code crash}.
 */
public final class StdioTestServer {
    private StdioTestServer() {}

    public static void main(String[] args) throws Exception {
        McpJsonMapper json = McpJsonDefaults.getMapper();
        StdioServerTransportProvider transport = new StdioServerTransportProvider(json);
        McpServer.SyncSpecification<?> spec = McpServer.sync(transport)
                .serverInfo("agentjail-stdio-test", "1.0")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(true).build());
        spec.tools(
                tool(json, "search", name -> "ran search"),
                tool(json, "delete_repo", name -> "deleted"),
                tool(json, "token_sha", name -> sha256(System.getenv("API_TOKEN"))),
                tool(
                        json,
                        "env_names",
                        name -> String.join(",", new TreeSet<>(System.getenv().keySet()))),
                tool(json, "pid", name -> Long.toString(ProcessHandle.current().pid())),
                tool(json, "crash", name -> {
                    Runtime.getRuntime().halt(3);
                    return "unreachable";
                }));
        McpSyncServer server = spec.build();
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        // The transport's threads may be daemons: the server lives until it is stopped.
        new java.util.concurrent.CountDownLatch(1).await();
    }

    private static McpServerFeatures.SyncToolSpecification tool(
            McpJsonMapper json, String name, Function<String, String> result) {
        return McpServerFeatures.SyncToolSpecification.builder()
                .tool(McpSchema.Tool.builder()
                        .name(name)
                        .description("Test tool " + name)
                        .inputSchema(json, "{\"type\":\"object\"}")
                        .build())
                .callHandler((exchange, req) -> {
                    record(req.name());
                    return McpSchema.CallToolResult.builder()
                            .addTextContent(result.apply(req.name()))
                            .build();
                })
                .build();
    }

    private static void record(String name) {
        try {
            Files.writeString(
                    Path.of(System.getenv("CALLS_FILE")),
                    name + "\n",
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sha256(String value) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
