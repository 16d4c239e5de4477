package dev.agentjail.policy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.SequenceNode;

/** Reads the {@code network} section of a policy into a {@link NetworkPolicy}. */
final class NetworkSection {
    static final Set<String> KEYS = Set.of("allow", "deny", "resolve", "tunnel", "mode", "ports");

    private final YamlNodes nodes;

    NetworkSection(YamlNodes nodes) {
        this.nodes = nodes;
    }

    NetworkPolicy read(Node network) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(network, "network", KEYS);
        List<HostPattern> allow = patterns(entries.get("allow"), "network.allow");
        List<HostPattern> deny = patterns(entries.get("deny"), "network.deny");
        Map<String, Integer> resolvePorts = new LinkedHashMap<>();
        Map<String, List<InetAddress>> resolve = resolve(entries.get("resolve"), "network.resolve", resolvePorts);
        List<HostPattern> tunnel = patterns(entries.get("tunnel"), "network.tunnel");
        return new NetworkPolicy(
                allow, deny, resolve, tunnel, mode(entries.get("mode")), ports(entries.get("ports")), resolvePorts);
    }

    private NetworkPolicy.Mode mode(Node node) throws PolicyException {
        if (node == null) {
            return NetworkPolicy.Mode.ENFORCE;
        }
        String text = nodes.string(node, "network.mode");
        return switch (text) {
            case "enforce" -> NetworkPolicy.Mode.ENFORCE;
            case "report" -> NetworkPolicy.Mode.REPORT;
            default ->
                throw nodes.error(node, "network.mode", "expected enforce or report, got " + Quoting.quote(text));
        };
    }

    private List<Integer> ports(Node node) throws PolicyException {
        List<Integer> ports = new ArrayList<>();
        if (node == null) {
            return ports;
        }
        List<Node> items = nodes.sequence(node, "network.ports");
        for (int i = 0; i < items.size(); i++) {
            String itemPath = "network.ports[" + i + "]";
            int port = nodes.integer(items.get(i), itemPath);
            if (port < 1 || port > 65535) {
                throw nodes.error(items.get(i), itemPath, "port out of range: " + port + " (1-65535)");
            }
            if (ports.contains(port)) {
                throw nodes.error(items.get(i), itemPath, "port " + port + " is already listed");
            }
            ports.add(port);
        }
        return ports;
    }

    private List<HostPattern> patterns(Node node, String path) throws PolicyException {
        List<HostPattern> patterns = new ArrayList<>();
        if (node == null) {
            return patterns;
        }
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String text = nodes.string(items.get(i), itemPath);
            try {
                patterns.add(HostPattern.parse(text));
            } catch (MalformedTargetException e) {
                throw nodes.error(
                        items.get(i), itemPath, "invalid host pattern " + Quoting.quote(text) + ": " + e.getMessage());
            }
        }
        return patterns;
    }

    /**
     * Pinned addresses: canonical {@code host} or {@code host:port} to one or more IP literals, each optionally with
     * the port to dial ({@code addr:port}, {@code [v6]:port}; one port for all of a key's addresses), put in {@code
     * ports}; nothing is resolved here.
     */
    private Map<String, List<InetAddress>> resolve(Node node, String path, Map<String, Integer> ports)
            throws PolicyException {
        Map<String, List<InetAddress>> resolve = new LinkedHashMap<>();
        if (node == null) {
            return resolve;
        }
        for (Map.Entry<String, Node> entry : nodes.mapping(node, path, null).entrySet()) {
            String keyPath = YamlNodes.child(path, entry.getKey());
            Node value = entry.getValue();
            String host = hostName(entry.getKey(), value, keyPath);
            if (resolve.containsKey(host)) {
                throw nodes.error(value, keyPath, "duplicate host " + Quoting.quote(host) + " after canonicalisation");
            }
            List<Node> items = value instanceof SequenceNode ? nodes.sequence(value, keyPath) : List.of(value);
            if (items.isEmpty()) {
                throw nodes.error(value, keyPath, "expected at least one ip address");
            }
            List<InetAddress> addresses = new ArrayList<>();
            Integer port = null;
            for (int i = 0; i < items.size(); i++) {
                String itemPath = value instanceof SequenceNode ? keyPath + "[" + i + "]" : keyPath;
                String text = nodes.string(items.get(i), itemPath);
                Integer itemPort = null;
                String address = text;
                if (!text.startsWith("[") && text.chars().filter(c -> c == ':').count() == 1) {
                    int colon = text.indexOf(':');
                    address = text.substring(0, colon);
                    itemPort = port(text.substring(colon + 1), items.get(i), itemPath);
                } else if (text.startsWith("[") && text.contains("]:")) {
                    int close = text.indexOf("]:");
                    address = text.substring(0, close + 1);
                    itemPort = port(text.substring(close + 2), items.get(i), itemPath);
                }
                if (i > 0 && !java.util.Objects.equals(port, itemPort)) {
                    throw nodes.error(
                            items.get(i),
                            itemPath,
                            "every address of " + Quoting.quote(host)
                                    + " needs the same port (or none): a connection dials one port");
                }
                port = itemPort;
                addresses.add(address(items.get(i), itemPath, address));
            }
            resolve.put(host, addresses);
            if (port != null) {
                ports.put(host, port);
            }
        }
        return resolve;
    }

    private int port(String text, Node node, String path) throws PolicyException {
        try {
            int port = Integer.parseInt(text);
            if (port >= 1 && port <= 65535 && String.valueOf(port).equals(text)) {
                return port;
            }
        } catch (NumberFormatException notANumber) {
            // Named below.
        }
        throw nodes.error(node, path, "invalid port " + Quoting.quote(text) + " (1-65535)");
    }

    private String hostName(String key, Node value, String keyPath) throws PolicyException {
        Authorities.HostPort parsed;
        try {
            parsed = Authorities.split(key);
        } catch (MalformedTargetException e) {
            throw nodes.error(value, keyPath, "invalid host name: " + e.getMessage());
        }
        if (parsed.kind() != HostKind.DNS) {
            throw nodes.error(value, keyPath, "a resolve key must be a host name, not an ip address");
        }
        return parsed.port().isPresent() ? parsed.host() + ":" + parsed.port().getAsInt() : parsed.host();
    }

    private InetAddress address(Node node, String path, String text) throws PolicyException {
        try {
            return InetAddress.getByAddress(ipBytes(text));
        } catch (MalformedTargetException e) {
            throw nodes.error(node, path, "invalid ip address " + Quoting.quote(text) + ": " + e.getMessage());
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 or 16 bytes are always a valid address", e);
        }
    }

    /** IPv4 in any form the host parser accepts; IPv6 with or without brackets, never with a port or zone. */
    private static byte[] ipBytes(String text) throws MalformedTargetException {
        if (!text.startsWith("[") && text.indexOf(':') >= 0) {
            byte[] bytes = Ipv6Literals.parse(text);
            if (bytes == null) {
                throw new MalformedTargetException("not an ipv4 or ipv6 address");
            }
            return bytes;
        }
        Authorities.HostPort parsed = Authorities.split(text);
        if (parsed.port().isPresent()) {
            throw new MalformedTargetException("a port is not allowed here");
        }
        return switch (parsed.kind()) {
            case IPV4 -> Ipv4Literals.parseDottedQuad(parsed.host());
            case IPV6 -> Ipv6Literals.parse(parsed.host());
            case DNS -> throw new MalformedTargetException("expected an ip address, not a host name");
        };
    }
}
