package dev.agentjail.policy;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An approved MCP server: remote at {@code url}, or run on the host from {@code command} (a stdio
 * server with its own {@code env}, outside the jail). Only the tools, resources and prompts the
 * filters approve reach the agent; server-to-client sampling and elicitation are off unless allowed.
 */
public record McpServer(
        String name,
        Optional<URI> url,
        List<String> command,
        Map<String, String> env,
        NameFilter tools,
        NameFilter resources,
        NameFilter prompts,
        boolean sampling,
        boolean elicitation) {
    public McpServer {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(url, "url");
        command = List.copyOf(command);
        env = Map.copyOf(env);
        Objects.requireNonNull(tools, "tools");
        Objects.requireNonNull(resources, "resources");
        Objects.requireNonNull(prompts, "prompts");
        if (url.isPresent() == !command.isEmpty()) {
            throw new IllegalArgumentException("an MCP server has either a url or a command");
        }
    }
}
