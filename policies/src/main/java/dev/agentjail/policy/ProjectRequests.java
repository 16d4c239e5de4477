package dev.agentjail.policy;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Finds the entries of one project-layer document that widen the jail: what lets more leave it (hosts, report mode,
 * tunnels, ports, address pins, MCP servers, credentials, upstream CAs, redaction weakened), what lets more run or be
 * seen in it (binds, devices, commands, environment, limits raised, jail options), and where its audit log goes. Each
 * is judged against what the more authoritative documents merged before it already say, so restating them widens
 * nothing. Everything else a project file may write narrows: denies, masks, protected paths, locks, lower limits,
 * redaction patterns and known values, a stricter mode or action, and entries for an MCP server that another layer
 * already approved (they can only narrow its filters). The document has already been read successfully, so its shapes
 * are the expected ones.
 */
final class ProjectRequests {
    /**
     * A request, the YAML node it was written as (for {@code policy show --origin}), and the project file whose trust
     * covers it (its own, or for a preset that a project file extends, that file's), by real path.
     */
    record Found(ProjectRequest request, Node node, String trustFile) {}

    private final YamlNodes nodes;
    private final PolicyFiles files;
    private final Path home;
    private final Optional<Path> root;

    /** {@code root} is the project directory (a real path); paths inside it need no trust. */
    ProjectRequests(Origins origins, Path home, Optional<Path> root) {
        this.nodes = new YamlNodes(origins);
        this.home = home;
        this.files = new PolicyFiles(origins, home);
        this.root = root;
    }

    /**
     * The widening entries of {@code document}, given {@code before}: the sections merged from the documents before it;
     * {@code trustFile} is the project file whose trust they need.
     */
    List<Found> scan(PolicyDocument document, Map<String, Node> before, String trustFile) throws PolicyException {
        Scan scan = new Scan(before);
        Map<String, Node> settings = document.settings();
        if (settings.get("network") instanceof MappingNode network) {
            scan.network(network);
        }
        if (settings.get("mcp") instanceof MappingNode mcp) {
            scan.mcp(mcp);
        }
        scan.credentials(settings.get("credentials"));
        if (settings.get("env") instanceof MappingNode env) {
            scan.env(env);
        }
        if (settings.get("filesystem") instanceof MappingNode filesystem) {
            scan.filesystem(filesystem);
        }
        if (settings.get("limits") instanceof MappingNode limits) {
            scan.limits(limits);
        }
        if (settings.get("jail") instanceof MappingNode jail) {
            scan.jail(jail);
        }
        if (settings.get("redaction") instanceof MappingNode redaction) {
            scan.redaction(redaction);
        }
        if (settings.get("tls") instanceof MappingNode tls) {
            // Inside the project too: whoever holds the key of a CA the repository brings could impersonate any
            // upstream, also the hosts that the user's credentials are sent to.
            scan.items(
                    tls,
                    "upstream_ca",
                    "tls",
                    (item, text) -> Optional.of("makes the proxy trust the CA in " + Quoting.quote(text)
                            + " for every upstream server, also those credentials go to"));
        }
        if (settings.get("audit") instanceof MappingNode audit) {
            Node log = value(audit, "log");
            if (log != null && !PolicyStack.restates(scan.before("audit", "log"), log)) {
                files.read(nodes, log, "audit.log");
                scan.found.add(found(
                        log,
                        "audit.log",
                        "makes agentjail write its audit log to the host file "
                                + Quoting.quote(nodes.string(log, "audit.log"))
                                + " instead of where your own policy keeps it"));
            }
            AuditSection reading = new AuditSection(nodes, files);
            for (String key : List.of("exec", "files")) {
                Node node = value(audit, key);
                if (node != null
                        && !reading.onOff(node, "audit." + key)
                        && reading.onOff(scan.before("audit", key), "audit." + key)) {
                    scan.found.add(found(
                            node,
                            "audit." + key,
                            key.equals("exec")
                                    ? "turns off the record of every program the agent runs"
                                    : "turns off the record of every file the agent changes"));
                }
            }
            Node failure = value(audit, "failure");
            Node failureBefore = scan.before("audit", "failure");
            if (failure != null
                    && "open".equals(nodes.string(failure, "audit.failure"))
                    && (failureBefore == null || !"open".equals(nodes.string(failureBefore, "audit.failure")))) {
                scan.found.add(found(
                        failure,
                        "audit.failure",
                        "lets the agent run programs and change files unrecorded when the audit supervisor fails"));
            }
        }
        // In the file's order, so that the error names the first widening line.
        return scan.found.stream()
                .sorted(java.util.Comparator.comparingInt(f -> f.request().line()))
                .map(f -> new Found(f.request(), f.node(), trustFile))
                .toList();
    }

    private interface Describer {
        Optional<String> describe(Node item, String text) throws PolicyException;
    }

    /** One document's scan: what it found, against what was merged before it. */
    private final class Scan {
        final List<Found> found = new ArrayList<>();
        private final Map<String, Node> merged;

        Scan(Map<String, Node> merged) {
            this.merged = merged;
        }

        Node before(String section, String key) {
            return YamlNodes.value(merged.get(section), key);
        }

        void network(MappingNode network) throws PolicyException {
            items(network, "allow", "network", (item, text) -> {
                try {
                    Authorities.HostPort parsed = Authorities.split(text);
                    if (parsed.kind() != HostKind.DNS) {
                        return Optional.of("allows the IP address " + Quoting.quote(text)
                                + " (the host's own or a private address too) past the SSRF guard");
                    }
                } catch (MalformedTargetException e) {
                    // A wildcard pattern: names only.
                }
                return Optional.of("allows requests to " + Quoting.quote(text));
            });
            items(
                    network,
                    "tunnel",
                    "network",
                    (item, text) -> Optional.of("relays " + Quoting.quote(text)
                            + " without TLS interception: no redaction, no per-request decision or record"));
            items(
                    network,
                    "ports",
                    "network",
                    (item, text) ->
                            Optional.of("makes every allow pattern without a port stand for port " + text + " too"));
            Node mode = value(network, "mode");
            if (mode != null
                    && "report".equals(nodes.string(mode, "network.mode"))
                    && !PolicyStack.restates(before("network", "mode"), mode)) {
                found.add(found(
                        mode,
                        "network.mode",
                        "switches to report mode: requests to hosts no allow entry covers go through, only recorded"));
            }
            Node resolve = value(network, "resolve");
            if (resolve != null) {
                Node pinnedBefore = before("network", "resolve");
                for (Map.Entry<String, Node> entry :
                        nodes.mapping(resolve, "network.resolve", null).entrySet()) {
                    Node pinned = entry.getValue();
                    if (PolicyStack.restates(YamlNodes.value(pinnedBefore, entry.getKey()), pinned)) {
                        continue;
                    }
                    String addresses = pinned instanceof ScalarNode scalar
                            ? scalar.getValue()
                            : String.join(
                                    ", ",
                                    nodes.sequence(pinned, "network.resolve").stream()
                                            .map(n -> n instanceof ScalarNode sn ? sn.getValue() : "?")
                                            .toList());
                    found.add(found(
                            pinned,
                            YamlNodes.child("network.resolve", entry.getKey()),
                            "sends the jail's requests for " + Quoting.quote(entry.getKey()) + " to "
                                    + Quoting.shorten(addresses)
                                    + " (the host's own or a private address too), past DNS and the SSRF guard"));
                }
            }
        }

        /**
         * A server that no document before approved is a new way out; an entry for one that is already approved (the
         * same endpoint) only narrows it: its filters are intersected with the other entries' ({@link McpSection}).
         */
        void mcp(MappingNode mcp) throws PolicyException {
            Node servers = value(mcp, "servers");
            if (servers == null) {
                return;
            }
            List<String> approved = new ArrayList<>();
            Node serversBefore = before("mcp", "servers");
            if (serversBefore instanceof SequenceNode list) {
                for (Node server : list.getValue()) {
                    endpoint(YamlNodes.value(server, "url")).ifPresent(approved::add);
                }
            }
            List<Node> items = nodes.sequence(servers, "mcp.servers");
            for (int i = 0; i < items.size(); i++) {
                Node server = items.get(i);
                Optional<String> endpoint = endpoint(YamlNodes.value(server, "url"));
                if (endpoint.isPresent() && approved.contains(endpoint.get())) {
                    continue;
                }
                Node name = YamlNodes.value(server, "name");
                Node url = YamlNodes.value(server, "url");
                found.add(found(
                        server,
                        "mcp.servers[" + i + "]",
                        "approves the MCP server "
                                + (name instanceof ScalarNode n ? Quoting.quote(n.getValue()) : "?")
                                + (url instanceof ScalarNode u ? " at " + Quoting.shorten(u.getValue()) : "")
                                + " with the tools, resources and prompts it lists"));
            }
        }

        void credentials(Node credentials) throws PolicyException {
            if (credentials == null) {
                return;
            }
            Node rulesBefore = merged.get("credentials");
            List<Node> items = nodes.sequence(credentials, "credentials");
            for (int i = 0; i < items.size(); i++) {
                String path = "credentials[" + i + "]";
                if (!(items.get(i) instanceof MappingNode rule) || listed(rulesBefore, rule)) {
                    continue;
                }
                Node env = value(rule, "env");
                Node file = value(rule, "file");
                Node hosts = value(rule, "hosts");
                String secret = file != null
                        ? "the host file " + Quoting.quote(nodes.string(file, path + ".file"))
                        : "the host's " + (env == null ? "variable" : Quoting.quote(nodes.string(env, path + ".env")));
                List<String> names = new ArrayList<>();
                if (hosts != null) {
                    for (Node host : nodes.sequence(hosts, path + ".hosts")) {
                        names.add(Quoting.shorten(nodes.string(host, path + ".hosts")));
                    }
                }
                found.add(found(rule, path, "hands " + secret + " to requests to " + String.join(", ", names)));
            }
        }

        void env(MappingNode env) throws PolicyException {
            items(
                    env,
                    "forward",
                    "env",
                    (item, text) -> Optional.of(
                            "copies the host's environment variable " + Quoting.quote(text) + " into the jail"));
            Node set = value(env, "set");
            if (set != null) {
                Node setBefore = before("env", "set");
                for (Map.Entry<String, Node> entry :
                        nodes.mapping(set, "env.set", null).entrySet()) {
                    if (PolicyStack.restates(YamlNodes.value(setBefore, entry.getKey()), entry.getValue())) {
                        continue;
                    }
                    found.add(found(
                            entry.getValue(),
                            YamlNodes.child("env.set", entry.getKey()),
                            "sets the jail's environment variable " + Quoting.quote(entry.getKey())
                                    + " (variables such as NODE_OPTIONS, LD_PRELOAD or a tool's config path decide"
                                    + " what runs in the jail)"));
                }
            }
        }

        void filesystem(MappingNode filesystem) throws PolicyException {
            items(
                    filesystem,
                    "read",
                    "filesystem",
                    (item, text) -> outside(hostPath(text))
                            ? Optional.of("binds the host path " + Quoting.quote(text) + " into the jail read-only")
                            : Optional.empty());
            // Inside the project too: a writable bind over a protected path would undo its protection.
            items(
                    filesystem,
                    "write",
                    "filesystem",
                    (item, text) ->
                            Optional.of("binds the host path " + Quoting.quote(text) + " into the jail read-write"));
        }

        void limits(MappingNode limits) throws PolicyException {
            for (NodeTuple tuple : limits.getValue()) {
                String key = ((ScalarNode) tuple.getKeyNode()).getValue();
                Node value = tuple.getValueNode();
                String path = "limits." + key;
                Node earlier = before("limits", key);
                long now = limit(key, nodes.string(value, path));
                long was = earlier == null ? defaultLimit(key) : limit(key, nodes.string(earlier, path));
                if (now > was) {
                    found.add(found(
                            value,
                            path,
                            "raises " + path + " to " + Quoting.quote(nodes.string(value, path)) + " (from "
                                    + (earlier == null ? "the default" : Quoting.quote(nodes.string(earlier, path)))
                                    + ")"));
                }
            }
        }

        void jail(MappingNode jail) throws PolicyException {
            items(
                    jail,
                    "devices",
                    "jail",
                    (item, text) -> Optional.of("gives the jail the host's " + Quoting.shorten(text) + " devices"));
            items(
                    jail,
                    "pre_start",
                    "jail",
                    (item, text) ->
                            Optional.of("runs the command " + Quoting.shorten(text) + " in the jail before the agent"));
            flag(
                    jail,
                    "new_session",
                    false,
                    true,
                    "keeps the agent in the terminal's session: it can open /dev/tty (seccomp still blocks"
                            + " TIOCSTI and TIOCLINUX)");
            flag(jail, "share_timezone", true, true, "shows the jail the host's time zone");
            Node hostname = value(jail, "hostname");
            if (hostname != null && !PolicyStack.restates(before("jail", "hostname"), hostname)) {
                String text = nodes.string(hostname, "jail.hostname");
                if (!(before("jail", "hostname") == null && text.equals(JailSettings.DEFAULT_HOSTNAME))) {
                    found.add(found(
                            hostname,
                            "jail.hostname",
                            "names the jail's host " + Quoting.quote(text) + " (an agent may take it for a real one)"));
                }
            }
        }

        /** A boolean jail option set to {@code widening} (the default: {@code defaultValue}) when it was not before. */
        private void flag(MappingNode jail, String key, boolean widening, boolean defaultValue, String asks)
                throws PolicyException {
            Node node = value(jail, key);
            if (node == null || nodes.bool(node, "jail." + key) != widening) {
                return;
            }
            Node earlier = before("jail", key);
            boolean was = earlier == null ? defaultValue : nodes.bool(earlier, "jail." + key);
            if (was != widening) {
                found.add(found(node, "jail." + key, asks));
            }
        }

        void redaction(MappingNode redaction) throws PolicyException {
            Node action = value(redaction, "action");
            Node earlier = before("redaction", "action");
            if (action != null
                    && "redact".equals(nodes.string(action, "redaction.action"))
                    && earlier != null
                    && "block".equals(nodes.string(earlier, "redaction.action"))) {
                found.add(found(
                        action,
                        "redaction.action",
                        "weakens redaction from block to redact: a request carrying a secret is sent, with markers"
                                + " in place of the secrets"));
            }
            // Never echo the value: an allow entry may be a real secret that someone exempted by mistake.
            items(
                    redaction,
                    "allow",
                    "redaction",
                    (item, text) -> Optional.of("exempts a value from redaction, so it leaves the jail as it is"));
        }

        /** Each entry of the list {@code section.key} that the list merged before does not hold already. */
        void items(MappingNode section, String key, String sectionName, Describer describer) throws PolicyException {
            Node list = value(section, key);
            if (list == null) {
                return;
            }
            String path = sectionName + "." + key;
            Node earlier = before(sectionName, key);
            List<Node> items = nodes.sequence(list, path);
            for (int i = 0; i < items.size(); i++) {
                String itemPath = path + "[" + i + "]";
                String text = nodes.string(items.get(i), itemPath);
                if (listed(earlier, items.get(i))) {
                    continue;
                }
                Optional<String> asks = describer.describe(items.get(i), text);
                if (asks.isPresent()) {
                    found.add(found(items.get(i), itemPath, asks.get()));
                }
            }
        }
    }

    private static boolean listed(Node list, Node item) {
        return list instanceof SequenceNode sequence
                && sequence.getValue().stream().anyMatch(e -> YamlNodes.same(e, item));
    }

    private static Optional<String> endpoint(Node url) {
        if (!(url instanceof ScalarNode scalar)) {
            return Optional.empty();
        }
        try {
            URI uri = new URI(scalar.getValue());
            return uri.getScheme() == null || uri.getHost() == null
                    ? Optional.empty()
                    : Optional.of(McpSection.endpoint(uri));
        } catch (URISyntaxException e) {
            return Optional.empty();
        }
    }

    /** A limit as a number to compare: seconds, bytes or a count. */
    private static long limit(String key, String text) {
        try {
            return switch (key) {
                case "timeout" -> Quantities.parseDuration(text).toSeconds();
                case "processes", "open_files" -> Long.parseLong(text.trim());
                case "cpu" -> LimitsSection.parseCpu(text);
                default -> Quantities.parseSize(text);
            };
        } catch (MalformedEntryException | NumberFormatException e) {
            throw new IllegalStateException("checked when the document was read", e);
        }
    }

    private static long defaultLimit(String key) {
        return switch (key) {
            case "timeout" -> Limits.DEFAULT_TIMEOUT.toSeconds();
            case "memory" -> Limits.DEFAULT_MEMORY_BYTES;
            case "processes" -> Limits.DEFAULT_PROCESSES;
            case "open_files" -> Limits.DEFAULT_OPEN_FILES;
            case "file_size" -> Limits.DEFAULT_FILE_SIZE_BYTES;
            case "tmp_size" -> Limits.DEFAULT_TMP_SIZE_BYTES;
            // No limit by default: any value a project writes narrows.
            case "address_space", "cpu" -> Long.MAX_VALUE;
            default -> throw new IllegalStateException("unknown limit " + key);
        };
    }

    private Found found(Node node, String key, String asks) {
        return new Found(
                new ProjectRequest(
                        nodes.origins().source(node).name(), node.getStartMark().getLine() + 1, key, asks),
                node,
                "");
    }

    private Path hostPath(String text) {
        try {
            return HostPath.parse(text).resolve(home);
        } catch (MalformedEntryException e) {
            throw new IllegalStateException("checked when the document was read", e);
        }
    }

    /** Whether {@code path} (symlinks resolved as far as it exists) lies outside the project directory. */
    private boolean outside(Path path) {
        if (root.isEmpty()) {
            return true;
        }
        Optional<Path> real = realPrefix(path.toAbsolutePath().normalize());
        // A dangling link or an unreadable parent cannot be judged: it counts as outside.
        return real.isEmpty() || !real.get().startsWith(root.get());
    }

    private static Node value(MappingNode mapping, String name) {
        return YamlNodes.value(mapping, name);
    }

    /** The real path of the longest existing prefix of {@code path}, with the rest appended. */
    private static Optional<Path> realPrefix(Path path) {
        Path existing = path;
        while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return Optional.of(path);
        }
        try {
            return Optional.of(existing.toRealPath().resolve(existing.relativize(path)));
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
