package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code env} section of a policy into an {@link EnvPolicy}. */
final class EnvSection {
    static final Set<String> KEYS = Set.of("forward", "set", "deny");

    private final YamlNodes nodes;

    /** Where each name was forwarded or set, as {@code env.forward[0] (line 4)}, for other sections' errors. */
    private final Map<String, String> origins = new HashMap<>();

    EnvSection(YamlNodes nodes) {
        this.nodes = nodes;
    }

    /** Reads a variable name that must be valid in a policy. */
    static String name(YamlNodes nodes, Node node, String path) throws PolicyException {
        String name = nodes.string(node, path);
        Optional<String> problem = EnvPolicy.nameProblem(name);
        if (problem.isPresent()) {
            throw nodes.error(node, path, problem.get());
        }
        return name;
    }

    /** Denied name patterns (a name, or a prefix ending in {@code *}) and where each is written. */
    private final Map<String, String> denied = new LinkedHashMap<>();

    /** The deny entry that covers {@code name}, as {@code 'PATTERN' (FILE:LINE)}, if one does. */
    Optional<String> deniedBy(String name) {
        for (Map.Entry<String, String> entry : denied.entrySet()) {
            String pattern = entry.getKey();
            boolean match = pattern.endsWith("*")
                    ? name.startsWith(pattern.substring(0, pattern.length() - 1))
                    : name.equals(pattern);
            if (match) {
                return Optional.of(Quoting.quote(pattern) + " (" + entry.getValue() + ")");
            }
        }
        return Optional.empty();
    }

    /** The names read so far and where they are. */
    Map<String, String> origins() {
        return Map.copyOf(origins);
    }

    EnvPolicy read(Node env) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(env, "env", KEYS);
        deny(entries.get("deny"), "env.deny");
        Map<String, String> forwarded = new HashMap<>();
        List<String> forward = forward(entries.get("forward"), "env.forward", forwarded);
        Map<String, String> set = set(entries.get("set"), "env.set", forwarded);
        return new EnvPolicy(forward, set);
    }

    private void deny(Node node, String path) throws PolicyException {
        if (node == null) {
            return;
        }
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String pattern = nodes.string(items.get(i), itemPath);
            String name = pattern.endsWith("*") ? pattern.substring(0, pattern.length() - 1) : pattern;
            Optional<String> problem =
                    name.isEmpty() ? Optional.of("'*' alone would deny every variable") : EnvPolicy.nameProblem(name);
            if (problem.isPresent()) {
                throw nodes.error(
                        items.get(i),
                        itemPath,
                        "invalid name pattern " + Quoting.quote(pattern) + ": " + problem.get());
            }
            denied.putIfAbsent(pattern, nodes.origins().where(items.get(i)));
        }
    }

    /** Refuses a name that a deny entry covers, naming the entry and where it is written. */
    void checkNotDenied(Node node, String path, String name) throws PolicyException {
        Optional<String> deniedBy = deniedBy(name);
        if (deniedBy.isPresent()) {
            throw nodes.error(node, path, Quoting.quote(name) + " is denied by env.deny " + deniedBy.get());
        }
    }

    private List<String> forward(Node node, String path, Map<String, String> seen) throws PolicyException {
        List<String> names = new ArrayList<>();
        if (node == null) {
            return names;
        }
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String name = nodes.string(items.get(i), itemPath);
            checkName(items.get(i), itemPath, name);
            checkNotDenied(items.get(i), itemPath, name);
            String earlier = seen.putIfAbsent(name, itemPath);
            if (earlier != null) {
                throw nodes.error(items.get(i), itemPath, Quoting.quote(name) + " is already listed at " + earlier);
            }
            origins.put(name, itemPath + " (line " + line(items.get(i)) + ")");
            names.add(name);
        }
        return names;
    }

    private Map<String, String> set(Node node, String path, Map<String, String> forwarded) throws PolicyException {
        Map<String, String> values = new LinkedHashMap<>();
        if (node == null) {
            return values;
        }
        for (Map.Entry<String, Node> entry : nodes.mapping(node, path, null).entrySet()) {
            String name = entry.getKey();
            String keyPath = YamlNodes.child(path, name);
            Node valueNode = entry.getValue();
            checkName(valueNode, keyPath, name);
            checkNotDenied(valueNode, keyPath, name);
            String earlier = forwarded.get(name);
            if (earlier != null) {
                throw nodes.error(
                        valueNode,
                        keyPath,
                        Quoting.quote(name) + " is also forwarded at " + earlier + "; forward it or set it, not both");
            }
            String value = nodes.string(valueNode, keyPath);
            Optional<String> problem = EnvPolicy.valueProblem(value);
            if (problem.isPresent()) {
                throw nodes.error(valueNode, keyPath, problem.get());
            }
            origins.put(name, keyPath + " (line " + line(valueNode) + ")");
            values.put(name, value);
        }
        return values;
    }

    private static int line(Node node) {
        return node.getStartMark().getLine() + 1;
    }

    private void checkName(Node node, String path, String name) throws PolicyException {
        Optional<String> problem = EnvPolicy.nameProblem(name);
        if (problem.isPresent()) {
            throw nodes.error(node, path, problem.get());
        }
    }
}
