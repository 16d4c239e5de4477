package dev.agentjail.policy;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Which document every YAML node came from. Merging keeps the nodes of each document, so an error
 * found in the merged policy, or a value {@code policy show --origin} prints, still names the file
 * and line it was written on.
 */
final class Origins {
    private final Map<Node, PolicySource> sources = new IdentityHashMap<>();
    private final PolicySource fallback;

    /** {@code fallback} is the source of any node not registered (a single-document load registers none). */
    Origins(PolicySource fallback) {
        this.fallback = Objects.requireNonNull(fallback, "fallback");
    }

    /** Registers {@code node} and everything under it as written in {@code source}. */
    void register(Node node, PolicySource source) {
        sources.put(node, source);
        if (node instanceof MappingNode mapping) {
            for (NodeTuple tuple : mapping.getValue()) {
                register(tuple.getKeyNode(), source);
                register(tuple.getValueNode(), source);
            }
        } else if (node instanceof SequenceNode sequence) {
            for (Node item : sequence.getValue()) {
                register(item, source);
            }
        }
    }

    /** Registers a node the merge built (a merged mapping or list) as belonging to {@code source}. */
    void registerOne(Node node, PolicySource source) {
        sources.put(node, source);
    }

    PolicySource source(Node node) {
        return sources.getOrDefault(node, fallback);
    }

    /** {@code FILE:LINE} of a node, as messages and {@code policy show --origin} print it. */
    String where(Node node) {
        return source(node).name() + ":" + (node.getStartMark().getLine() + 1);
    }
}
