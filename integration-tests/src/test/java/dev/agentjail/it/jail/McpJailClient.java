package dev.agentjail.it.jail;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * The MCP client that {@link McpInJailTest} runs inside the jail, as an agent would: the official SDK's Streamable
 * HTTP client on the JDK's HttpClient, with nothing but what the jail sets (the proxy through {@link
 * ProxySelector#getDefault()}, which reads the {@code https.proxyHost} of the jail's {@code JAVA_TOOL_OPTIONS}, and the
 * default trust store those options name). It needs only the SDK's jars: no test framework.
 *
 * <p>Arguments: {@code NAME=URL} for each approved server (initialize, list the tools, call {@code search} with a
 * secret in its arguments, call {@code delete_repo}), and {@code unapproved=URL} for an endpoint no policy approves
 * (initialize only). It prints one {@code NAME.STEP=RESULT} line per step, never the secret, and always exits 0: the
 * test judges the lines.
 */
public final class McpJailClient {
    /**
     * A GitHub token shape (redacted by the built-in catalog) holding the word the after-suite log scan looks for in
     * every log ({@code NoSecretInLogsTest.GENERIC}): the proxy must replace it before the server sees it.
     */
    static final String SECRET = "ghp_canaryMcpInJail7Kq2Vx9Lm4Np8Rt3Wz6Yb1";

    /** What {@code search} is called with, besides the secret. */
    static final String QUERY = "mcp in the jail";

    /** The note argument carrying the secret: {@value #NOTE_PREFIX} then {@link #SECRET}. */
    static final String NOTE_PREFIX = "token ";

    static final String UNAPPROVED = "unapproved";

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private McpJailClient() {}

    public static void main(String[] args) {
        for (String arg : args) {
            int eq = arg.indexOf('=');
            String name = arg.substring(0, eq);
            URI url = URI.create(arg.substring(eq + 1));
            if (name.equals(UNAPPROVED)) {
                unapproved(url);
            } else {
                approved(name, url);
            }
        }
        System.out.flush();
        // The SDK's and the HttpClient's threads must not keep the jail's process alive.
        System.exit(0);
    }

    private static void approved(String name, URI url) {
        McpSyncClient client = client(url);
        try {
            step(name + ".init", () -> {
                client.initialize();
                return "ok";
            });
            step(
                    name + ".list",
                    () -> client.listTools().tools().stream()
                            .map(McpSchema.Tool::name)
                            .sorted()
                            .collect(Collectors.joining(",")));
            step(
                    name + ".call",
                    () -> text(client.callTool(new McpSchema.CallToolRequest(
                            "search", Map.of("q", QUERY, "note", NOTE_PREFIX + SECRET)))));
            step(name + ".deny", () -> {
                try {
                    return "called " + text(client.callTool(new McpSchema.CallToolRequest("delete_repo", Map.of())));
                } catch (McpError e) {
                    return e.getJsonRpcError().code() + " "
                            + e.getJsonRpcError().message();
                }
            });
        } finally {
            client.closeGracefully();
        }
    }

    private static void unapproved(URI url) {
        McpSyncClient client = client(url);
        try {
            step(UNAPPROVED + ".init", () -> {
                try {
                    client.initialize();
                    return "initialized";
                } catch (RuntimeException e) {
                    return "refused " + describe(e);
                }
            });
        } finally {
            client.closeGracefully();
        }
    }

    private static McpSyncClient client(URI url) {
        HttpClient.Builder http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(TIMEOUT)
                .proxy(ProxySelector.getDefault());
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(
                        url.getScheme() + "://" + url.getRawAuthority())
                .endpoint(url.getRawPath())
                .clientBuilder(http)
                .build();
        return McpClient.sync(transport).requestTimeout(TIMEOUT).build();
    }

    private static String text(McpSchema.CallToolResult result) {
        return result.content().stream()
                .map(c -> c instanceof McpSchema.TextContent t ? t.text() : c.type())
                .collect(Collectors.joining(" "));
    }

    /** Prints {@code NAME=RESULT}, or {@code NAME=error …} when the step threw. */
    private static void step(String name, Callable<String> step) {
        String result;
        try {
            result = step.call();
        } catch (Exception e) {
            result = "error " + describe(e);
        }
        System.out.println(name + "=" + result.replace(SECRET, "<secret>").replace('\n', ' '));
    }

    /** The exception and its causes, with the JSON-RPC code where the SDK reports one. */
    private static String describe(Throwable e) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            out.append(out.isEmpty() ? "" : " <- ").append(t.getClass().getSimpleName());
            if (t instanceof McpError m && m.getJsonRpcError() != null) {
                out.append(' ').append(m.getJsonRpcError().code());
            }
            out.append(": ").append(t.getMessage());
        }
        return out.toString();
    }
}
