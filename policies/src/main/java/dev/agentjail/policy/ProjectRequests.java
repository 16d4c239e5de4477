package dev.agentjail.policy;

import java.io.IOException;
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

/**
 * Finds the entries of one project-layer document that reach outside the jail and the project: credentials, forwarded
 * host variables, devices, upstream CAs, and host paths and files outside the project directory. The document has
 * already been read successfully, so its shapes are the expected ones.
 */
final class ProjectRequests {
    /** A request and the YAML node it was written as (for {@code policy show --origin}). */
    record Found(ProjectRequest request, Node node) {}

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

    List<Found> scan(PolicyDocument document) throws PolicyException {
        List<Found> found = new ArrayList<>();
        Map<String, Node> settings = document.settings();
        credentials(settings.get("credentials"), found);
        if (settings.get("network") instanceof MappingNode network) {
            network(network, found);
        }
        if (settings.get("env") instanceof MappingNode env) {
            items(
                    env,
                    "forward",
                    "env.forward",
                    found,
                    (item, text) -> Optional.of(
                            "copies the host's environment variable " + Quoting.quote(text) + " into the jail"));
        }
        if (settings.get("filesystem") instanceof MappingNode filesystem) {
            for (String key : List.of("read", "write")) {
                String access = key.equals("read") ? "read-only" : "read-write";
                items(
                        filesystem,
                        key,
                        "filesystem." + key,
                        found,
                        (item, text) -> outside(hostPath(text))
                                ? Optional.of("binds the host path " + Quoting.quote(text) + " into the jail " + access)
                                : Optional.empty());
            }
        }
        if (settings.get("jail") instanceof MappingNode jail) {
            items(
                    jail,
                    "devices",
                    "jail.devices",
                    found,
                    (item, text) -> Optional.of("gives the jail the host's " + Quoting.shorten(text) + " devices"));
        }
        if (settings.get("tls") instanceof MappingNode tls) {
            // Inside the project too: whoever holds the key of a CA the repository brings could impersonate any
            // upstream, also the hosts that the user's credentials are sent to.
            items(
                    tls,
                    "upstream_ca",
                    "tls.upstream_ca",
                    found,
                    (item, text) -> Optional.of("makes the proxy trust the CA in " + Quoting.quote(text)
                            + " for every upstream server, also those credentials go to"));
        }
        if (settings.get("audit") instanceof MappingNode audit) {
            Node log = value(audit, "log");
            if (log != null && outside(files.read(nodes, log, "audit.log"))) {
                found.add(found(
                        log,
                        "audit.log",
                        "makes agentjail write its audit log to the host file "
                                + Quoting.quote(nodes.string(log, "audit.log"))));
            }
        }
        return found;
    }

    /**
     * Address pins and IP-literal allow entries. The proxy runs on the host, so an address a project names explicitly
     * passes the SSRF guard: a pin of any name to 127.0.0.1 or 169.254.169.254, or {@code allow: ["10.0.0.5:8080"]},
     * would let the agent reach the host's own services or the cloud metadata endpoint.
     */
    private void network(MappingNode network, List<Found> found) throws PolicyException {
        Node resolve = value(network, "resolve");
        if (resolve != null) {
            for (Map.Entry<String, Node> entry :
                    nodes.mapping(resolve, "network.resolve", null).entrySet()) {
                Node pinned = entry.getValue();
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
        items(network, "allow", "network.allow", found, (item, text) -> {
            try {
                Authorities.HostPort parsed = Authorities.split(text);
                return parsed.kind() == HostKind.DNS
                        ? Optional.empty()
                        : Optional.of("allows the IP address " + Quoting.quote(text)
                                + " (the host's own or a private address too) past the SSRF guard");
            } catch (MalformedTargetException e) {
                return Optional.empty(); // a wildcard pattern: names only
            }
        });
    }

    private void credentials(Node credentials, List<Found> found) throws PolicyException {
        if (credentials == null) {
            return;
        }
        List<Node> items = nodes.sequence(credentials, "credentials");
        for (int i = 0; i < items.size(); i++) {
            String path = "credentials[" + i + "]";
            if (!(items.get(i) instanceof MappingNode rule)) {
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

    private interface Describer {
        Optional<String> describe(Node item, String text) throws PolicyException;
    }

    private void items(MappingNode section, String key, String path, List<Found> found, Describer describer)
            throws PolicyException {
        Node list = value(section, key);
        if (list == null) {
            return;
        }
        List<Node> items = nodes.sequence(list, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String text = nodes.string(items.get(i), itemPath);
            Optional<String> asks = describer.describe(items.get(i), text);
            if (asks.isPresent()) {
                found.add(found(items.get(i), itemPath, asks.get()));
            }
        }
    }

    private Found found(Node node, String key, String asks) {
        return new Found(
                new ProjectRequest(
                        nodes.origins().source(node).name(), node.getStartMark().getLine() + 1, key, asks),
                node);
    }

    private Path hostPath(String text) throws PolicyException {
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

    private static Node value(MappingNode mapping, String name) {
        for (NodeTuple tuple : mapping.getValue()) {
            if (tuple.getKeyNode() instanceof ScalarNode k && k.getValue().equals(name)) {
                return tuple.getValueNode();
            }
        }
        return null;
    }
}
