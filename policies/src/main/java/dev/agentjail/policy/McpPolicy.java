package dev.agentjail.policy;

import java.util.HashSet;
import java.util.List;
import java.util.Optional;

/** The {@code mcp} section: the approved MCP servers, by unique name. */
public record McpPolicy(List<McpServer> servers) {
    public McpPolicy {
        servers = List.copyOf(servers);
        var names = new HashSet<String>();
        for (McpServer server : servers) {
            if (!names.add(server.name())) {
                throw new IllegalArgumentException("two MCP servers named " + server.name());
            }
        }
    }

    public static McpPolicy none() {
        return new McpPolicy(List.of());
    }

    public Optional<McpServer> server(String name) {
        return servers.stream().filter(s -> s.name().equals(name)).findFirst();
    }
}
