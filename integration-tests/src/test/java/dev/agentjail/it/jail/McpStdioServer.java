package dev.agentjail.it.jail;

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
import java.util.concurrent.CountDownLatch;

/**
 * The host-side stdio MCP server of {@link McpInJailTest}: the official SDK's stdio server, which the launcher starts
 * on the host (outside the jail) from the policy's {@code mcp.servers[].command}. Its tools are {@link
 * McpUpstream#TOOLS} and {@value #TOKEN_TOOL}, which answers with the SHA-256 (hex) of its variable {@value
 * #TOKEN_VARIABLE}, so that the test can see the credential arrived without the jail ever holding it. Every call that
 * reaches it is appended, one tool name a line, to the file its variable {@value #CALLS_VARIABLE} names.
 */
public final class McpStdioServer {
    /** The variable the policy's {@code env} gives the server, from a host variable the jail never sees. */
    static final String TOKEN_VARIABLE = "TOKEN";

    /** The variable naming the file the calls are written to. */
    static final String CALLS_VARIABLE = "CALLS_FILE";

    static final String TOKEN_TOOL = "token_sha";

    private McpStdioServer() {}

    public static void main(String[] args) throws InterruptedException {
        McpJsonMapper json = McpJsonDefaults.getMapper();
        McpServer.SyncSpecification<?> spec = McpServer.sync(new StdioServerTransportProvider(json))
                .serverInfo("agentjail-it-stdio", "1.0")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(true).build());
        for (String name : McpUpstream.TOOLS) {
            spec.tools(tool(json, name, "ran " + name));
        }
        spec.tools(tool(json, TOKEN_TOOL, sha256(String.valueOf(System.getenv(TOKEN_VARIABLE)))));
        McpSyncServer server = spec.build();
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        // The transport's threads may be daemons: the server lives until the launcher stops it.
        new CountDownLatch(1).await();
    }

    /** The SHA-256 of {@code value} (UTF-8), in lower-case hex. */
    static String sha256(String value) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static McpServerFeatures.SyncToolSpecification tool(McpJsonMapper json, String name, String answer) {
        return McpServerFeatures.SyncToolSpecification.builder()
                .tool(McpSchema.Tool.builder()
                        .name(name)
                        .description("Runs " + name + " on the host")
                        .inputSchema(json, "{\"type\":\"object\"}")
                        .build())
                .callHandler((exchange, request) -> {
                    record(request.name());
                    return McpSchema.CallToolResult.builder()
                            .addTextContent(answer)
                            .build();
                })
                .build();
    }

    private static void record(String tool) {
        try {
            Files.writeString(
                    Path.of(System.getenv(CALLS_VARIABLE)),
                    tool + "\n",
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
