package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The MCP part of the policy as the proxy applies it: which URLs are approved MCP endpoints, what each JSON-RPC
 * message to them may do, which listed tools, resources and prompts the agent may see, and the tool pins. One per
 * proxy; thread-safe.
 */
public final class McpGate {
    /** Client-to-server methods passed through without a filter (notifications are always passed). */
    private static final Set<String> PLAIN_METHODS = Set.of(
            "initialize",
            "ping",
            "tools/list",
            "resources/list",
            "resources/templates/list",
            "prompts/list",
            "completion/complete",
            "logging/setLevel");

    /** Methods that make a JSON-RPC body MCP wherever it goes. */
    private static final Set<String> MCP_METHODS = Set.of(
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "resources/subscribe",
            "resources/unsubscribe",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
            "sampling/createMessage",
            "elicitation/create",
            "roots/list");

    /** One approved remote endpoint: where, and which server it is. */
    record Endpoint(McpServer server, String scheme, String host, int port, String path) {}

    private final List<Endpoint> endpoints;
    private final ToolPins pins = new ToolPins();
    private final LegacyEndpoints legacy = new LegacyEndpoints();
    private final SessionBinding sessions = new SessionBinding();
    private final ToolShadowing shadowing;

    private McpGate(List<Endpoint> endpoints) {
        this.endpoints = List.copyOf(endpoints);
        this.shadowing =
                new ToolShadowing(this.endpoints.stream().map(Endpoint::server).toList());
    }

    public static McpGate of(McpPolicy policy) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (McpServer server : policy.servers()) {
            server.url().ifPresent(url -> endpoints.add(endpoint(server, url)));
        }
        return new McpGate(endpoints);
    }

    private static Endpoint endpoint(McpServer server, URI url) {
        String scheme = url.getScheme().toLowerCase(Locale.ROOT);
        String host = canonicalHost(url.getHost());
        int port = url.getPort() > 0 ? url.getPort() : defaultPort(scheme);
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        return new Endpoint(server, scheme, host, port, path);
    }

    /** A URI's host as a {@code Target} names it: lower case, IPv6 without brackets, no trailing dot. */
    static String canonicalHost(String uriHost) {
        String host = uriHost.toLowerCase(Locale.ROOT);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        return host;
    }

    /** The port a URL of {@code scheme} (lower case) means when it names none. */
    static int defaultPort(String scheme) {
        return scheme.equals("https") ? 443 : 80;
    }

    /** Whether any remote server is approved (when none is, only the content check runs). */
    public boolean hasEndpoints() {
        return !endpoints.isEmpty();
    }

    /**
     * The approved server whose URL is exactly this request's scheme, canonical host, port and path (without query),
     * or null.
     */
    public McpServer serverAt(String scheme, String host, int port, String path) {
        for (Endpoint e : endpoints) {
            if (e.scheme.equals(scheme) && e.host.equals(host) && e.port == port && e.path.equals(path)) {
                return e.server;
            }
        }
        return null;
    }

    /** Whether {@code method} is an MCP method (the content check that finds MCP sent to an unapproved place). */
    public static boolean isMcpMethod(String method) {
        return method != null && (MCP_METHODS.contains(method) || method.startsWith("notifications/"));
    }

    public ToolPins pins() {
        return pins;
    }

    /** The message endpoints of the legacy HTTP+SSE sessions open now. */
    LegacyEndpoints legacy() {
        return legacy;
    }

    /** The Streamable HTTP sessions each server issued through this proxy. */
    SessionBinding sessions() {
        return sessions;
    }

    /** The tools of each server that other servers' descriptions are checked for. */
    ToolShadowing shadowing() {
        return shadowing;
    }

    /** Decides on one client-to-server message to {@code server}. */
    public McpVerdict decide(McpServer server, RpcMessage message) {
        String base = "mcp.servers[" + server.name() + "]";
        if (message.kind() == RpcMessage.Kind.RESPONSE) {
            // An answer to a server's request (roots, sampling, elicitation): redacted like any body, then passed.
            return McpVerdict.allow(base);
        }
        String method = message.method();
        if (message.kind() == RpcMessage.Kind.NOTIFICATION) {
            // A request without an id would still run on some servers: only real notifications pass.
            return method.startsWith("notifications/")
                    ? McpVerdict.allow(base)
                    : McpVerdict.refuse(
                            McpErrors.METHOD_NOT_PERMITTED,
                            McpErrors.REASON_METHOD_NOT_PERMITTED,
                            "'" + printable(method) + "' without an id is not passed to MCP servers by agentjail",
                            base);
        }
        if (PLAIN_METHODS.contains(method)) {
            return McpVerdict.allow(base);
        }
        return switch (method) {
            case "tools/call" -> tool(server, base, message.param("name"));
            case "resources/read", "resources/subscribe", "resources/unsubscribe" ->
                named(
                        server.resources(),
                        base + ".resources",
                        "resource",
                        message.param("uri"),
                        McpErrors.RESOURCE_NOT_APPROVED,
                        McpErrors.REASON_RESOURCE_NOT_APPROVED);
            case "prompts/get" ->
                named(
                        server.prompts(),
                        base + ".prompts",
                        "prompt",
                        message.param("name"),
                        McpErrors.PROMPT_NOT_APPROVED,
                        McpErrors.REASON_PROMPT_NOT_APPROVED);
            default ->
                McpVerdict.refuse(
                        McpErrors.METHOD_NOT_PERMITTED,
                        McpErrors.REASON_METHOD_NOT_PERMITTED,
                        "method '" + printable(method) + "' is not passed to MCP servers by agentjail",
                        base);
        };
    }

    private McpVerdict tool(McpServer server, String base, String name) {
        String rule = base + ".tools";
        McpVerdict filtered = named(
                server.tools(), rule, "tool", name, McpErrors.TOOL_NOT_APPROVED, McpErrors.REASON_TOOL_NOT_APPROVED);
        if (!filtered.allowed()) {
            return filtered;
        }
        if (pins.blocked(server.name(), name)) {
            return McpVerdict.refuse(
                    McpErrors.TOOL_CHANGED,
                    McpErrors.REASON_TOOL_CHANGED,
                    "tool '" + name + "' is blocked: its definition changed since agentjail first saw it (" + rule
                            + ")",
                    rule);
        }
        return filtered;
    }

    private static McpVerdict named(NameFilter filter, String rule, String what, String name, int code, String reason) {
        if (name == null) {
            return McpVerdict.refuse(
                    McpErrors.INVALID_REQUEST,
                    McpErrors.REASON_INVALID_REQUEST,
                    "a " + what + " request needs a string " + (what.equals("resource") ? "uri" : "name"),
                    rule);
        }
        if (what.equals("tool") && !validToolName(name)) {
            return McpVerdict.refuse(
                    code,
                    reason,
                    "tool name '" + printable(name) + "' is not a valid MCP tool name (letters, digits, '_', '-', '.')",
                    rule);
        }
        if (!filter.permits(name)) {
            return McpVerdict.refuse(
                    code,
                    reason,
                    what + " '" + printable(name) + "' is not approved by the policy (" + rule + ")",
                    rule);
        }
        return McpVerdict.allow(rule);
    }

    /** Tool names as the MCP specification recommends them: 1 to 128 of {@code A-Z a-z 0-9 _ - .}. */
    static boolean validToolName(String name) {
        if (name.isEmpty() || name.length() > 128) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '_'
                    || c == '-'
                    || c == '.';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Visible ASCII only, at most 128 chars: names echo into errors and records, never raw control bytes. */
    public static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && sb.length() < 128; i++) {
            char c = s.charAt(i);
            sb.append(c >= 0x20 && c < 0x7f && c != '\'' ? c : '?');
        }
        return sb.toString();
    }
}
