package dev.agentjail.it.jail;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * The MCP client that {@link McpInJailTest} runs inside the jail, as an agent would: the official SDK's Streamable
 * HTTP client on the JDK's HttpClient, with nothing but what the jail sets (the proxy through {@link
 * ProxySelector#getDefault()}, which reads the {@code https.proxyHost} of the jail's {@code JAVA_TOOL_OPTIONS}, and the
 * default trust store those options name). It needs only the SDK's jars: no test framework.
 *
 * <p>Arguments: {@code NAME=URL} for each approved server (initialize, list the tools, call {@code search} with a
 * secret in its arguments, call {@code delete_repo}; {@value #LEGACY} over the legacy HTTP+SSE transport, whose URL is
 * the event stream's; {@value #HOST}, the host-side server, then also calls {@code token_sha} and reports the jail's
 * environment), {@code rug=URL} for the server that changes a tool (list, call {@code read_doc}, list again, call
 * {@code search}), and {@code unapproved=URL} for an endpoint no policy approves (initialize only). A URL written
 * {@code $NAME} is read from the jail's variable {@code NAME} (and printed as {@code NAME.url}). It prints one {@code NAME.STEP=RESULT} line per step, never the secret, and always exits 0: the
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

    /** The name of the legacy HTTP+SSE server: its URL is the event stream's. */
    static final String LEGACY = "legacy";

    /** The name of the server that changes {@code search} when {@code read_doc} is called. */
    static final String RUG = "rug";

    /** The name of the host-side stdio server, whose extra steps report the token it got and the jail's env. */
    static final String HOST = "tools";

    /** A URL argument {@code $NAME}: the URL is the value of the jail's variable {@code NAME}. */
    static final String FROM_ENV = "$";

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private McpJailClient() {}

    public static void main(String[] args) {
        for (String arg : args) {
            int eq = arg.indexOf('=');
            String name = arg.substring(0, eq);
            String value = arg.substring(eq + 1);
            if (value.startsWith(FROM_ENV)) {
                value = String.valueOf(System.getenv(value.substring(FROM_ENV.length())));
                System.out.println(name + ".url=" + value);
            }
            URI url = URI.create(value);
            switch (name) {
                case UNAPPROVED -> unapproved(url);
                case RUG -> rugPull(url);
                case LEGACY -> approved(name, legacyClient(url));
                default -> approved(name, client(url));
            }
        }
        System.out.flush();
        // The SDK's and the HttpClient's threads must not keep the jail's process alive.
        System.exit(0);
    }

    private static void approved(String name, McpSyncClient client) {
        try {
            step(name + ".init", () -> {
                client.initialize();
                return "ok";
            });
            step(name + ".list", () -> toolNames(client));
            step(
                    name + ".call",
                    () -> text(client.callTool(new McpSchema.CallToolRequest(
                            "search", Map.of("q", QUERY, "note", NOTE_PREFIX + SECRET)))));
            step(name + ".deny", () -> callOrError(client, "delete_repo"));
            if (name.equals(HOST)) {
                step(
                        name + ".token",
                        () -> text(client.callTool(new McpSchema.CallToolRequest("token_sha", Map.of()))));
                step(name + ".env", McpJailClient::environment);
            }
        } finally {
            client.closeGracefully();
        }
    }

    /**
     * Lists the tools, calls {@code read_doc} (after which the server changes {@code search}), lists again and calls
     * {@code search}.
     */
    private static void rugPull(URI url) {
        McpSyncClient client = client(url);
        try {
            step(RUG + ".init", () -> {
                client.initialize();
                return "ok";
            });
            step(RUG + ".list", () -> toolNames(client));
            step(
                    RUG + ".trigger",
                    () -> text(client.callTool(new McpSchema.CallToolRequest("read_doc", Map.of("q", QUERY)))));
            step(RUG + ".relist", () -> toolNames(client));
            step(RUG + ".call", () -> callOrError(client, "search"));
        } finally {
            client.closeGracefully();
        }
    }

    private static String toolNames(McpSyncClient client) {
        return client.listTools().tools().stream()
                .map(McpSchema.Tool::name)
                .sorted()
                .collect(Collectors.joining(","));
    }

    /** {@code called RESULT}, or {@code CODE MESSAGE} of the JSON-RPC error the call got. */
    private static String callOrError(McpSyncClient client, String tool) {
        try {
            return "called " + text(client.callTool(new McpSchema.CallToolRequest(tool, Map.of("q", QUERY))));
        } catch (McpError e) {
            return e.getJsonRpcError().code() + " " + e.getJsonRpcError().message();
        }
    }

    /**
     * The jail's environment, every {@code NAME=VALUE} on its own line, as Base64 (one line of output whatever the
     * values hold), so that the test can look for the host-side server's token in it.
     */
    private static String environment() {
        String all = new TreeMap<>(System.getenv())
                .entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining("\n"));
        return Base64.getEncoder().encodeToString(all.getBytes(StandardCharsets.UTF_8));
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
        HttpClient.Builder http = http();
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(
                        url.getScheme() + "://" + url.getRawAuthority())
                .endpoint(url.getRawPath())
                .clientBuilder(http)
                .build();
        return McpClient.sync(transport).requestTimeout(TIMEOUT).build();
    }

    /** A client of the legacy HTTP+SSE transport whose event stream is at {@code url}. */
    private static McpSyncClient legacyClient(URI url) {
        HttpClientSseClientTransport transport = HttpClientSseClientTransport.builder(
                        url.getScheme() + "://" + url.getRawAuthority())
                .sseEndpoint(url.getRawPath())
                .clientBuilder(http())
                .build();
        return McpClient.sync(transport).requestTimeout(TIMEOUT).build();
    }

    private static HttpClient.Builder http() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(TIMEOUT)
                .proxy(ProxySelector.getDefault());
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
