package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Typed access to composed YAML nodes of one policy (one file, or several merged), turning every type, key and shape
 * problem into a {@link PolicyException} with the node's file, line and dotted key path.
 */
final class YamlNodes {
    private static final int MAX_SUGGESTION_DISTANCE = 2;

    private final Origins origins;

    YamlNodes(Origins origins) {
        this.origins = origins;
    }

    Origins origins() {
        return origins;
    }

    PolicyException error(Node node, String key, String problem) {
        return new PolicyException(
                origins.source(node).name(), node.getStartMark().getLine() + 1, key, problem);
    }

    static String child(String parent, String key) {
        String shown = Quoting.shorten(key);
        return parent.isEmpty() ? shown : parent + "." + shown;
    }

    /**
     * Whether two nodes hold the same value: scalars with the same tag and text, lists with equal items in the same
     * order, mappings with the same keys and equal values in any order.
     */
    static boolean same(Node a, Node b) {
        if (a instanceof ScalarNode x && b instanceof ScalarNode y) {
            return x.getTag().equals(y.getTag()) && x.getValue().equals(y.getValue());
        }
        if (a instanceof SequenceNode x && b instanceof SequenceNode y) {
            if (x.getValue().size() != y.getValue().size()) {
                return false;
            }
            for (int i = 0; i < x.getValue().size(); i++) {
                if (!same(x.getValue().get(i), y.getValue().get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof MappingNode x && b instanceof MappingNode y) {
            if (x.getValue().size() != y.getValue().size()) {
                return false;
            }
            for (NodeTuple tuple : x.getValue()) {
                Node other = value(y, ((ScalarNode) tuple.getKeyNode()).getValue());
                if (other == null || !same(tuple.getValueNode(), other)) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    /** The value of {@code key} in {@code mapping} (a mapping node with scalar keys), or null. */
    static Node value(Node mapping, String key) {
        if (mapping instanceof MappingNode map) {
            for (NodeTuple tuple : map.getValue()) {
                if (tuple.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) {
                    return tuple.getValueNode();
                }
            }
        }
        return null;
    }

    static String describe(Node node) {
        if (node instanceof MappingNode) {
            return "a mapping";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        if (node.getTag().equals(Tag.NULL)) {
            return "null";
        }
        return Quoting.quote(((ScalarNode) node).getValue());
    }

    /**
     * The entries of a mapping by key text, in file order. Duplicate keys are refused here because
     * composing (unlike constructing) does not apply snakeyaml's duplicate-key check. {@code
     * allowedKeys} null means any key is allowed.
     */
    Map<String, Node> mapping(Node node, String path, Set<String> allowedKeys) throws PolicyException {
        String shownPath = path.isEmpty() ? "-" : path;
        rejectAnchor(node, shownPath);
        if (!(node instanceof MappingNode mapping)) {
            throw error(node, shownPath, "expected a mapping, got " + describe(node));
        }
        Map<String, Node> entries = new LinkedHashMap<>();
        for (NodeTuple tuple : mapping.getValue()) {
            Node keyNode = tuple.getKeyNode();
            rejectAnchor(keyNode, shownPath);
            if (!(keyNode instanceof ScalarNode scalarKey) || keyNode.getTag().equals(Tag.NULL)) {
                throw error(keyNode, shownPath, "keys must be strings, got " + describe(keyNode));
            }
            String key = scalarKey.getValue();
            if (allowedKeys != null && !allowedKeys.contains(key)) {
                throw error(keyNode, child(path, key), unknownKey(key, allowedKeys));
            }
            if (entries.containsKey(key)) {
                throw error(keyNode, child(path, key), "duplicate key " + Quoting.quote(key));
            }
            entries.put(key, tuple.getValueNode());
        }
        return entries;
    }

    /** The value of a required key of {@code parent}, or an error at the parent's line naming the key. */
    Node required(Map<String, Node> entries, Node parent, String parentPath, String key) throws PolicyException {
        Node node = entries.get(key);
        if (node == null) {
            throw error(parent, child(parentPath, key), "missing required key");
        }
        return node;
    }

    List<Node> sequence(Node node, String path) throws PolicyException {
        rejectAnchor(node, path);
        if (!(node instanceof SequenceNode sequence)) {
            throw error(node, path, "expected a list, got " + describe(node));
        }
        List<Node> items = new ArrayList<>(sequence.getValue());
        for (int i = 0; i < items.size(); i++) {
            rejectAnchor(items.get(i), path + "[" + i + "]");
        }
        return items;
    }

    String string(Node node, String path) throws PolicyException {
        rejectAnchor(node, path);
        if (!(node instanceof ScalarNode scalar) || node.getTag().equals(Tag.NULL)) {
            throw error(node, path, "expected a string, got " + describe(node));
        }
        return scalar.getValue();
    }

    int integer(Node node, String path) throws PolicyException {
        rejectAnchor(node, path);
        if (node instanceof ScalarNode scalar
                && node.getTag().equals(Tag.INT)
                && scalar.getValue().matches("[0-9]{1,9}")) {
            return Integer.parseInt(scalar.getValue());
        }
        throw error(node, path, "expected an integer, got " + describe(node));
    }

    /**
     * Only {@code true} and {@code false} (in any case YAML allows, quoted or not); YAML 1.1's {@code
     * yes}, {@code no}, {@code on} and {@code off} are refused because they surprise readers.
     */
    boolean bool(Node node, String path) throws PolicyException {
        rejectAnchor(node, path);
        if (node instanceof ScalarNode scalar) {
            switch (scalar.getValue()) {
                case "true", "True", "TRUE" -> {
                    return true;
                }
                case "false", "False", "FALSE" -> {
                    return false;
                }
                default -> {
                    // yes, no, on, off: fall through to the error.
                }
            }
        }
        throw error(node, path, "expected true or false, got " + describe(node));
    }

    /**
     * An alias resolves to its anchored node, so refusing anchors refuses aliases too; nothing in a
     * policy needs them and they are the raw material of YAML bombs.
     */
    private void rejectAnchor(Node node, String path) throws PolicyException {
        if (node.getAnchor() != null) {
            throw error(node, path, "anchors and aliases are not allowed");
        }
    }

    private static String unknownKey(String key, Set<String> allowedKeys) {
        Optional<String> nearest = nearest(key, allowedKeys);
        String hint = nearest.isPresent()
                ? "did you mean " + Quoting.quote(nearest.get()) + "?"
                : "expected one of: " + String.join(", ", new TreeSet<>(allowedKeys));
        return "unknown key " + Quoting.quote(key) + " (" + hint + ")";
    }

    /** The valid key with the smallest edit distance, if it is close enough to be a typo. */
    static Optional<String> nearest(String key, Set<String> candidates) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : new TreeSet<>(candidates)) {
            int distance = editDistance(key, candidate);
            if (distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }
        boolean typo = bestDistance <= MAX_SUGGESTION_DISTANCE && bestDistance < key.length();
        return typo ? Optional.of(best) : Optional.empty();
    }

    /** Levenshtein distance; inputs are short keys, and long ones are cut to keep this cheap. */
    static int editDistance(String a, String b) {
        String left = a.length() > Quoting.MAX_ECHO ? a.substring(0, Quoting.MAX_ECHO) : a;
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= left.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (left.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
