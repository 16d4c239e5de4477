package dev.agentjail.policy;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code mcp} section of a policy into an {@link McpPolicy}. */
final class McpSection {
    static final Set<String> KEYS = Set.of("servers");
    static final Set<String> SERVER_KEYS =
            Set.of("name", "url", "command", "env", "tools", "resources", "prompts", "sampling", "elicitation");
    private static final Set<String> TOOL_KEYS = Set.of("allow", "deny");
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");

    private final YamlNodes nodes;

    McpSection(YamlNodes nodes) {
        this.nodes = nodes;
    }

    McpPolicy read(Node mcp) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(mcp, "mcp", KEYS);
        Node serversNode = entries.get("servers");
        if (serversNode == null) {
            return McpPolicy.none();
        }
        List<McpServer> servers = new ArrayList<>();
        Map<String, Node> seen = new HashMap<>();
        Map<String, Optional<String>> endpoints = new HashMap<>();
        Map<String, Integer> byEndpoint = new HashMap<>();
        List<Node> items = nodes.sequence(serversNode, "mcp.servers");
        for (int i = 0; i < items.size(); i++) {
            String path = "mcp.servers[" + i + "]";
            Node item = items.get(i);
            Map<String, Node> fields = nodes.mapping(item, path, SERVER_KEYS);
            Node nameNode = nodes.required(fields, item, path, "name");
            String name = nodes.string(nameNode, path + ".name");
            if (!NAME.matcher(name).matches()) {
                throw nodes.error(
                        nameNode,
                        path + ".name",
                        "invalid name " + Quoting.quote(name)
                                + ": lower-case letters, digits, '-' and '_', at most 63");
            }
            Node earlier = seen.putIfAbsent(name, item);
            Node urlNode = fields.get("url");
            Node commandNode = fields.get("command");
            if ((urlNode == null) == (commandNode == null)) {
                throw nodes.error(item, path, "give exactly one of url (a remote server) or command (a host-side one)");
            }
            Optional<URI> url = urlNode == null ? Optional.empty() : Optional.of(url(urlNode, path + ".url"));
            List<String> command = commandNode == null ? List.of() : command(commandNode, path + ".command");
            Node envNode = fields.get("env");
            if (envNode != null && commandNode == null) {
                throw nodes.error(
                        envNode, path + ".env", "env is the environment of a host-side server: it needs command");
            }
            Map<String, String> env = envNode == null ? Map.of() : env(envNode, path + ".env");
            Optional<String> endpoint = url.map(McpSection::endpoint);
            if (earlier != null && (endpoint.isEmpty() || !endpoint.equals(endpoints.get(name)))) {
                throw nodes.error(
                        nameNode,
                        path + ".name",
                        Quoting.quote(name) + " is already the name of another server, at "
                                + nodes.origins().where(earlier)
                                + "; a policy may restate a server (the same name and url), narrowing its filters,"
                                + " but not change what the name stands for");
            }
            McpServer server = new McpServer(
                    name,
                    url,
                    command,
                    env,
                    filter(fields.get("tools"), path + ".tools", TOOL_KEYS),
                    filter(fields.get("resources"), path + ".resources", Set.of("allow")),
                    filter(fields.get("prompts"), path + ".prompts", Set.of("allow")),
                    flag(fields.get("sampling"), path + ".sampling"),
                    flag(fields.get("elicitation"), path + ".elicitation"));
            endpoints.putIfAbsent(name, endpoint);
            Integer same = endpoint.map(byEndpoint::get).orElse(null);
            if (same == null) {
                endpoint.ifPresent(e -> byEndpoint.put(e, servers.size()));
                servers.add(server);
            } else {
                // Entries for one server, whatever their layers and names: each can only narrow the others.
                servers.set(same, narrowed(servers.get(same), server));
            }
        }
        return new McpPolicy(servers);
    }

    /** What both entries approve: the first entry's name and url, every filter narrowed by the second's. */
    private static McpServer narrowed(McpServer first, McpServer second) {
        return new McpServer(
                first.name(),
                first.url(),
                first.command(),
                first.env(),
                first.tools().narrowedBy(second.tools()),
                first.resources().narrowedBy(second.resources()),
                first.prompts().narrowedBy(second.prompts()),
                first.sampling() && second.sampling(),
                first.elicitation() && second.elicitation());
    }

    /**
     * A remote server's identity as the proxy matches requests to it: scheme, canonical host, port (the scheme's default
     * when none is given) and path. Two entries with the same endpoint are one server.
     */
    static String endpoint(URI url) {
        String scheme = url.getScheme().toLowerCase(Locale.ROOT);
        String host = url.getHost().toLowerCase(Locale.ROOT);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        int port = url.getPort() > 0 ? url.getPort() : scheme.equals("https") ? 443 : 80;
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        return scheme + "://" + host + ":" + port + path;
    }

    private URI url(Node node, String path) throws PolicyException {
        String text = nodes.string(node, path);
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw nodes.error(node, path, "invalid url " + Quoting.quote(text));
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !scheme.equals("http")) {
            throw nodes.error(node, path, "invalid url " + Quoting.quote(text) + ": expected an http or https url");
        }
        if (uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw nodes.error(node, path, "invalid url " + Quoting.quote(text) + ": no user info, query or fragment");
        }
        if (uri.getHost() == null) {
            throw nodes.error(node, path, "invalid url " + Quoting.quote(text) + ": no host");
        }
        return uri;
    }

    private List<String> command(Node node, String path) throws PolicyException {
        List<Node> items = nodes.sequence(node, path);
        if (items.isEmpty()) {
            throw nodes.error(node, path, "expected the program and its arguments");
        }
        List<String> argv = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            String arg = nodes.string(items.get(i), path + "[" + i + "]");
            if (arg.indexOf('\0') >= 0) {
                throw nodes.error(items.get(i), path + "[" + i + "]", "NUL is not allowed");
            }
            argv.add(arg);
        }
        return argv;
    }

    private Map<String, String> env(Node node, String path) throws PolicyException {
        Map<String, String> env = new LinkedHashMap<>();
        for (Map.Entry<String, Node> entry : nodes.mapping(node, path, null).entrySet()) {
            String keyPath = YamlNodes.child(path, entry.getKey());
            Optional<String> problem = EnvPolicy.nameProblem(entry.getKey());
            if (problem.isPresent()) {
                throw nodes.error(entry.getValue(), keyPath, problem.get());
            }
            String value = nodes.string(entry.getValue(), keyPath);
            Optional<String> valueProblem = EnvPolicy.valueProblem(value);
            if (valueProblem.isPresent()) {
                throw nodes.error(entry.getValue(), keyPath, valueProblem.get());
            }
            env.put(entry.getKey(), value);
        }
        return env;
    }

    private NameFilter filter(Node node, String path, Set<String> keys) throws PolicyException {
        if (node == null) {
            return NameFilter.none();
        }
        Map<String, Node> entries = nodes.mapping(node, path, keys);
        return new NameFilter(
                patterns(entries.get("allow"), path + ".allow"), patterns(entries.get("deny"), path + ".deny"));
    }

    private List<String> patterns(Node node, String path) throws PolicyException {
        List<String> patterns = new ArrayList<>();
        if (node == null) {
            return patterns;
        }
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String text = nodes.string(items.get(i), itemPath);
            Optional<String> problem = NameFilter.patternProblem(text);
            if (problem.isPresent()) {
                throw nodes.error(
                        items.get(i), itemPath, "invalid pattern " + Quoting.quote(text) + ": " + problem.get());
            }
            patterns.add(text);
        }
        return patterns;
    }

    private boolean flag(Node node, String path) throws PolicyException {
        return node != null && nodes.bool(node, path);
    }
}
