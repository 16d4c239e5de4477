package dev.agentjail.policy;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeId;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.resolver.Resolver;

/** Writes merged policy nodes back as block-style YAML, optionally with a {@code # FILE:LINE} comment per value. */
final class PolicyRenderer {
    private static final Pattern PLAIN =
            Pattern.compile("[A-Za-z0-9_./~@%+*\\[\\]-]([A-Za-z0-9_./~@%+*:= -]*[A-Za-z0-9_./~@%+*=-])?");
    private static final Resolver RESOLVER = new Resolver();

    private final Origins origins;
    private final boolean withOrigins;
    private final Map<Node, String> marks;
    private final StringBuilder out = new StringBuilder();

    /** The mark of the node being written (and everything under it), added to its origin comments. */
    private String mark;

    /** {@code marks} (identity-keyed) adds a note to the origin comment of a node and everything under it. */
    PolicyRenderer(Origins origins, boolean withOrigins, Map<Node, String> marks) {
        this.origins = origins;
        this.withOrigins = withOrigins;
        this.marks = marks;
    }

    String render(List<NodeTuple> merged, Map<String, String> lockedBy, List<PolicySource> sources) {
        out.append("# effective policy, merged from:\n");
        for (PolicySource source : sources) {
            out.append("#   ")
                    .append(source.layer().description())
                    .append(": ")
                    .append(source.name())
                    .append('\n');
        }
        out.append("version: 1\n");
        for (NodeTuple tuple : merged) {
            entry(tuple, 0);
        }
        if (!lockedBy.isEmpty()) {
            out.append("locked:\n");
            lockedBy.forEach((path, where) -> {
                out.append("  - ").append(scalar(path, Tag.STR));
                comment(where);
            });
        }
        return out.toString();
    }

    private void entry(NodeTuple tuple, int indent) {
        ScalarNode key = (ScalarNode) tuple.getKeyNode();
        Node value = tuple.getValueNode();
        String outer = mark;
        mark = marks.getOrDefault(value, mark);
        try {
            entry(key, value, indent);
        } finally {
            mark = outer;
        }
    }

    private void entry(ScalarNode key, Node value, int indent) {
        indent(indent);
        out.append(scalar(key.getValue(), Tag.STR)).append(':');
        if (value instanceof ScalarNode scalar) {
            out.append(' ').append(scalar(scalar));
            comment(origins.where(value));
        } else if (isEmpty(value)) {
            out.append(value instanceof MappingNode ? " {}" : " []");
            comment(origins.where(value));
        } else {
            comment(origins.where(key));
            block(value, indent + 2);
        }
    }

    private void block(Node node, int indent) {
        if (node instanceof MappingNode mapping) {
            for (NodeTuple tuple : mapping.getValue()) {
                entry(tuple, indent);
            }
            return;
        }
        for (Node item : ((SequenceNode) node).getValue()) {
            String outer = mark;
            mark = marks.getOrDefault(item, mark);
            try {
                item(item, indent);
            } finally {
                mark = outer;
            }
        }
    }

    private void item(Node item, int indent) {
        indent(indent);
        out.append('-');
        if (item instanceof ScalarNode scalar) {
            out.append(' ').append(scalar(scalar));
            comment(origins.where(item));
        } else if (isEmpty(item)) {
            out.append(item instanceof MappingNode ? " {}" : " []");
            comment(origins.where(item));
        } else if (item instanceof MappingNode mapping) {
            // The first entry goes on the dash's line, the others under it.
            int start = out.length();
            block(mapping, indent + 2);
            out.delete(start, start + indent + 1);
        } else {
            comment(origins.where(item));
            block(item, indent + 2);
        }
    }

    private static boolean isEmpty(Node node) {
        return node instanceof MappingNode mapping && mapping.getValue().isEmpty()
                || node instanceof SequenceNode sequence && sequence.getValue().isEmpty();
    }

    private void indent(int indent) {
        out.append(" ".repeat(indent));
    }

    private void comment(String where) {
        if (withOrigins) {
            out.append("  # ").append(where);
            if (mark != null) {
                out.append(" (").append(mark).append(')');
            }
        }
        out.append('\n');
    }

    private static String scalar(ScalarNode node) {
        return scalar(node.getValue(), node.getTag());
    }

    /** A scalar written so that it reads back with the same tag: plain when that is unambiguous, else quoted. */
    static String scalar(String value, Tag tag) {
        if (!tag.equals(Tag.STR)) {
            return value.isEmpty() ? "null" : value;
        }
        if (PLAIN.matcher(value).matches()
                && RESOLVER.resolve(NodeId.scalar, value, true).equals(Tag.STR)
                && !value.contains(" #")
                && !value.contains(": ")
                && !value.startsWith("*")
                && !value.startsWith("[")
                && !value.startsWith("-")) {
            return value;
        }
        StringBuilder quoted = new StringBuilder("\"");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                case '\t' -> quoted.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        quoted.append(String.format("\\x%02x", (int) c));
                    } else {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }
}
