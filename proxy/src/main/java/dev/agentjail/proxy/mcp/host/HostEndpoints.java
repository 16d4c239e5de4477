package dev.agentjail.proxy.mcp.host;

import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The synthetic URLs under which host-side MCP servers ({@code mcp.servers[].command}) appear in the jail: {@code
 * http://NAME.mcp.agentjail.internal/mcp}. {@code .internal} is reserved for private use and never resolves on the
 * internet; the proxy never resolves it at all, it routes these names to the bridge itself.
 */
public final class HostEndpoints {
    /** The reserved domain; every name under it is the proxy's own. */
    public static final String DOMAIN = "mcp.agentjail.internal";

    /** The one endpoint path a host-side server has. */
    public static final String PATH = "/mcp";

    /** The only port: the endpoints are plain HTTP between the agent and the proxy (both on the host's kernel). */
    public static final int PORT = 80;

    private static final String ENV_PREFIX = "AGENTJAIL_MCP_";

    private HostEndpoints() {}

    /** The host name of server {@code name}: '_' becomes '-' so that every URL parser accepts it. */
    public static String host(String name) {
        return name.replace('_', '-').toLowerCase(Locale.ROOT) + "." + DOMAIN;
    }

    public static URI url(String name) {
        return URI.create("http://" + host(name) + PATH);
    }

    /** The variable that carries the server's URL in the jail: {@code AGENTJAIL_MCP_<NAME>_URL}, '-' as '_'. */
    public static String envName(String name) {
        return ENV_PREFIX + name.replace('-', '_').toUpperCase(Locale.ROOT) + "_URL";
    }

    /** Whether a canonical host is the reserved domain or a name under it. */
    public static boolean reserved(String canonicalHost) {
        return canonicalHost.equals(DOMAIN) || canonicalHost.endsWith("." + DOMAIN);
    }

    /** The servers that run on the host. */
    public static List<McpServer> hostServers(McpPolicy policy) {
        return policy.servers().stream().filter(s -> !s.command().isEmpty()).toList();
    }

    /** Host name to server, for the host-side servers; two names that map to one host are refused. */
    public static Map<String, McpServer> byHost(McpPolicy policy) {
        Map<String, McpServer> hosts = new HashMap<>();
        for (McpServer server : hostServers(policy)) {
            McpServer other = hosts.putIfAbsent(host(server.name()), server);
            if (other != null) {
                throw new IllegalArgumentException("MCP servers " + other.name() + " and " + server.name()
                        + " would share the host name " + host(server.name()) + "; rename one");
            }
        }
        return hosts;
    }

    /**
     * The policy as the MCP inspection sees it: each host-side server approved at its synthetic URL, with the same
     * filters, so that lists, calls, pins, records and redaction apply to it exactly as to a remote server.
     */
    public static McpPolicy asUrlServers(McpPolicy policy) {
        List<McpServer> servers = new ArrayList<>();
        for (McpServer s : policy.servers()) {
            servers.add(
                    s.command().isEmpty()
                            ? s
                            : new McpServer(
                                    s.name(),
                                    Optional.of(url(s.name())),
                                    List.of(),
                                    Map.of(),
                                    s.tools(),
                                    s.resources(),
                                    s.prompts(),
                                    s.sampling(),
                                    s.elicitation()));
        }
        return new McpPolicy(servers);
    }

    /** {@code AGENTJAIL_MCP_<NAME>_URL} for each host-side server: what the launcher puts into the jail. */
    public static Map<String, String> jailVariables(McpPolicy policy) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        for (McpServer server : hostServers(policy)) {
            env.put(envName(server.name()), url(server.name()).toString());
        }
        return env;
    }
}
