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
        Map<String, List<InetAddress>> resolve = resolve(entries.get("resolve"), "network.resolve");
        List<HostPattern> tunnel = patterns(entries.get("tunnel"), "network.tunnel");
        return new NetworkPolicy(allow, deny, resolve, tunnel, mode(entries.get("mode")), ports(entries.get("ports")));
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

    /** Pinned addresses: canonical host name to one or more IP literals; nothing is resolved here. */
    private Map<String, List<InetAddress>> resolve(Node node, String path) throws PolicyException {
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
            resolve.put(host, addresses(value, keyPath));
        }
        return resolve;
    }

    private String hostName(String key, Node value, String keyPath) throws PolicyException {
        Authorities.HostPort parsed;
        try {
            parsed = Authorities.split(key);
        } catch (MalformedTargetException e) {
            throw nodes.error(value, keyPath, "invalid host name: " + e.getMessage());
        }
        if (parsed.port().isPresent()) {
            throw nodes.error(value, keyPath, "a resolve key is a host name without a port");
        }
        if (parsed.kind() != HostKind.DNS) {
            throw nodes.error(value, keyPath, "a resolve key must be a host name, not an ip address");
        }
        return parsed.host();
    }

    private List<InetAddress> addresses(Node value, String keyPath) throws PolicyException {
        if (!(value instanceof SequenceNode)) {
            return List.of(address(value, keyPath));
        }
        List<Node> items = nodes.sequence(value, keyPath);
        if (items.isEmpty()) {
            throw nodes.error(value, keyPath, "expected at least one ip address");
        }
        List<InetAddress> addresses = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            addresses.add(address(items.get(i), keyPath + "[" + i + "]"));
        }
        return addresses;
    }

    private InetAddress address(Node node, String path) throws PolicyException {
        String text = nodes.string(node, path);
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
