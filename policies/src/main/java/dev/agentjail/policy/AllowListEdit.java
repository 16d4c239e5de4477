package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.nodes.CollectionNode;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Adds {@code network.allow} entries to a policy file's text so that every other byte of it stays as the user wrote
 * it (comments, order, quoting, indentation), or says at which line the file's shape rules that out.
 *
 * <p>What it edits: a block list under {@code allow:} (new items after the last, at the same indentation), an empty
 * {@code allow: []} (replaced by a block list), a block {@code network:} mapping without {@code allow} ({@code allow:}
 * added as its first key), and a file without {@code network} (a section appended). What it refuses: flow-style
 * collections with content, anchors and aliases, items that are not one-line scalars or are indented unevenly,
 * indented top-level keys, unusual line breaks. It then checks its own work: the edited file must compose to exactly
 * the old data plus the new entries, or nothing is returned.
 */
public final class AllowListEdit {
    private static final String KEY = "network.allow";

    private final String name;
    private final List<Line> lines;
    private final String eol;

    private AllowListEdit(String name, List<Line> lines) {
        this.name = name;
        this.lines = lines;
        this.eol = lines.stream()
                .map(Line::end)
                .filter(e -> !e.isEmpty())
                .findFirst()
                .orElse("\n");
    }

    /** One line of the file and the line break after it ({@code ""} for a last line without one). */
    private record Line(String text, String end) {}

    /** A text edit: lines {@code from} (inclusive) to {@code to} (exclusive) replaced by {@code replacement}. */
    private record Edit(int from, int to, List<Line> replacement) {}

    /**
     * The text of a new policy file holding only these entries: {@code version: 1} and a {@code network.allow} list.
     */
    public static String newPolicy(List<String> entries) {
        try {
            return append("version: 1\n", "new policy", entries);
        } catch (PolicyException e) {
            throw new IllegalStateException("a new policy is always editable", e);
        }
    }

    /**
     * {@code text} with {@code entries} (valid allow entries, e.g. {@code api.example.com:8443}) appended to its
     * {@code network.allow}.
     *
     * @param name how errors name the file
     * @throws PolicyException naming the line when the file's shape cannot be edited faithfully
     * @throws IllegalArgumentException if an entry is no valid allow entry
     */
    public static String append(String text, String name, List<String> entries) throws PolicyException {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(name, "name");
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("no entries");
        }
        List<String> items = new ArrayList<>();
        for (String entry : entries) {
            try {
                HostPattern.parse(entry);
            } catch (MalformedTargetException e) {
                throw new IllegalArgumentException("not an allow entry: " + e.getMessage(), e);
            }
            items.add(PolicyRenderer.scalar(entry, Tag.STR));
        }
        AllowListEdit edit = new AllowListEdit(name, split(text, name));
        Node root = PolicyDocument.composeConfig(text, name);
        String edited = edit.apply(edit.plan(root, items));
        edit.check(root, PolicyDocument.composeConfig(edited, name), entries);
        return edited;
    }

    /** Splits after each {@code \n} or {@code \r\n}; other breaks (which YAML also counts as lines) are refused. */
    private static List<Line> split(String text, String name) throws PolicyException {
        List<Line> lines = new ArrayList<>();
        int start = 0;
        int number = 1;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean crlf = c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n';
            if ((c == '\r' && !crlf) || c == '\u0085' || c == '\u2028' || c == '\u2029') {
                throw new PolicyException(
                        name, number, "-", "a line break other than \\n or \\r\\n; add the entries by hand");
            }
            if (c == '\n' || crlf) {
                int end = crlf ? i + 2 : i + 1;
                lines.add(new Line(text.substring(start, i), text.substring(i, end)));
                start = end;
                i = end - 1;
                number++;
            }
        }
        if (start < text.length()) {
            lines.add(new Line(text.substring(start), ""));
        }
        return lines;
    }

    private Edit plan(Node root, List<String> items) throws PolicyException {
        if (!(root instanceof MappingNode top) || top.getFlowStyle() == DumperOptions.FlowStyle.FLOW) {
            throw refuse(root, "-", "the top level is not a block mapping");
        }
        refuseAnchors(root, Collections.newSetFromMap(new IdentityHashMap<>()));
        NodeTuple network = null;
        for (NodeTuple tuple : top.getValue()) {
            requireBlockKey(tuple, tuple.getKeyNode() instanceof ScalarNode s ? s.getValue() : "-");
            if (tuple.getKeyNode().getStartMark().getColumn() != 0) {
                throw refuse(tuple.getKeyNode(), "-", "top-level keys are indented");
            }
            if (isKey(tuple, "network")) {
                network = tuple;
            }
        }
        if (network == null) {
            return appendSection(top, items);
        }
        if (!(network.getValueNode() instanceof MappingNode section)
                || section.getFlowStyle() == DumperOptions.FlowStyle.FLOW) {
            throw refuse(
                    network.getValueNode(),
                    "network",
                    "not a block mapping (flow style {...}?); rewrite it in block style or add the entries by hand");
        }
        int column = section.getStartMark().getColumn();
        int unit = column - network.getKeyNode().getStartMark().getColumn();
        for (NodeTuple tuple : section.getValue()) {
            if (isKey(tuple, "allow")) {
                requireBlockKey(tuple, KEY);
                return appendItems(tuple, column, unit, items);
            }
        }
        // allow: as the first key of network, right under its key line, so no comment of another key moves.
        int after = network.getKeyNode().getStartMark().getLine() + 1;
        List<Line> added = new ArrayList<>();
        added.add(line(" ".repeat(column) + "allow:"));
        items.forEach(item -> added.add(line(" ".repeat(column + unit) + "- " + item)));
        return new Edit(after, after, added);
    }

    /** A {@code network:} section at the end of a file that has none. */
    private Edit appendSection(MappingNode top, List<String> items) throws PolicyException {
        for (int i = 0; i < lines.size(); i++) {
            String text = lines.get(i).text();
            if (text.equals("...") || text.startsWith("... ") || text.startsWith("...\t")) {
                throw new PolicyException(
                        name, i + 1, "-", "a document end marker ('...'); add the network section by hand");
            }
        }
        String unit = " ".repeat(indentUnit(top));
        List<Line> added = new ArrayList<>();
        added.add(line("network:"));
        added.add(line(unit + "allow:"));
        items.forEach(item -> added.add(line(unit + unit + "- " + item)));
        return new Edit(lines.size(), lines.size(), added);
    }

    /** The indentation of the file's first nested block mapping, else 2. */
    private static int indentUnit(MappingNode top) {
        for (NodeTuple tuple : top.getValue()) {
            if (tuple.getValueNode() instanceof MappingNode nested
                    && nested.getFlowStyle() == DumperOptions.FlowStyle.BLOCK
                    && !nested.getValue().isEmpty()) {
                int unit = nested.getStartMark().getColumn();
                if (unit > 0) {
                    return unit;
                }
            }
        }
        return 2;
    }

    private Edit appendItems(NodeTuple allow, int column, int unit, List<String> items) throws PolicyException {
        Node value = allow.getValueNode();
        if (!(value instanceof SequenceNode list)) {
            throw refuse(value, KEY, "not a list; add the entries by hand");
        }
        if (list.getFlowStyle() == DumperOptions.FlowStyle.FLOW) {
            return replaceEmptyFlowList(allow, list, column, unit, items);
        }
        int dash = list.getStartMark().getColumn();
        String gap = null;
        int last = -1;
        for (Node item : list.getValue()) {
            if (!(item instanceof ScalarNode scalar)
                    || scalar.getScalarStyle() == DumperOptions.ScalarStyle.LITERAL
                    || scalar.getScalarStyle() == DumperOptions.ScalarStyle.FOLDED
                    || item.getStartMark().getLine() != item.getEndMark().getLine()) {
                throw refuse(item, KEY, "an item that is not a one-line host; add the entries by hand");
            }
            String text = lines.get(item.getStartMark().getLine()).text();
            String before = text.substring(
                    0, text.offsetByCodePoints(0, item.getStartMark().getColumn()));
            String itemGap = itemGap(before, dash);
            if (itemGap == null || (gap != null && !gap.equals(itemGap))) {
                throw refuse(item, KEY, "items indented unevenly; add the entries by hand");
            }
            gap = itemGap;
            last = item.getEndMark().getLine();
        }
        List<Line> added = new ArrayList<>();
        String prefix = " ".repeat(dash) + "-" + gap;
        items.forEach(item -> added.add(line(prefix + item)));
        return new Edit(last + 1, last + 1, added);
    }

    /** The spaces between the dash and the item, when {@code before} is exactly {@code dash} spaces, '-', spaces. */
    private static String itemGap(String before, int dash) {
        if (before.length() < dash + 2 || before.charAt(dash) != '-') {
            return null;
        }
        String gap = before.substring(dash + 1);
        return onlySpaces(before.substring(0, dash)) && onlySpaces(gap) ? gap : null;
    }

    private static boolean onlySpaces(String text) {
        return text.chars().allMatch(c -> c == ' ');
    }

    /** {@code allow: []}, as {@code agentjail init} writes it, becomes a block list; a comment after it stays. */
    private Edit replaceEmptyFlowList(NodeTuple allow, SequenceNode list, int column, int unit, List<String> items)
            throws PolicyException {
        int at = list.getStartMark().getLine();
        if (!list.getValue().isEmpty()
                || at != list.getEndMark().getLine()
                || at != allow.getKeyNode().getStartMark().getLine()) {
            throw refuse(
                    list,
                    KEY,
                    "a flow-style list ([...]); rewrite it as a block list (one '- host' line per entry) or add the"
                            + " entries by hand");
        }
        Line original = lines.get(at);
        String text = original.text();
        int open = text.offsetByCodePoints(0, list.getStartMark().getColumn());
        int close = text.offsetByCodePoints(0, list.getEndMark().getColumn());
        String rest = text.substring(close);
        String kept = text.substring(0, open).stripTrailing() + (rest.isBlank() ? "" : rest);
        List<Line> replacement = new ArrayList<>();
        replacement.add(new Line(kept, original.end().isEmpty() ? eol : original.end()));
        items.forEach(item -> replacement.add(line(" ".repeat(column + unit) + "- " + item)));
        return new Edit(at, at + 1, replacement);
    }

    private String apply(Edit edit) {
        List<Line> out = new ArrayList<>(lines.subList(0, edit.from()));
        if (!out.isEmpty() && out.get(out.size() - 1).end().isEmpty()) {
            Line last = out.remove(out.size() - 1);
            out.add(new Line(last.text(), eol));
        }
        out.addAll(edit.replacement());
        out.addAll(lines.subList(edit.to(), lines.size()));
        StringBuilder text = new StringBuilder();
        out.forEach(l -> text.append(l.text()).append(l.end()));
        return text.toString();
    }

    /** Fails unless {@code after} holds the data of {@code before} with exactly {@code entries} added. */
    private void check(Node before, Node after, List<String> entries) throws PolicyException {
        @SuppressWarnings("unchecked")
        Map<Object, Object> expected = (Map<Object, Object>) data(before);
        @SuppressWarnings("unchecked")
        Map<Object, Object> network = (Map<Object, Object>)
                expected.computeIfAbsent(new Scalar(Tag.STR, "network"), k -> new LinkedHashMap<>());
        @SuppressWarnings("unchecked")
        List<Object> allow =
                (List<Object>) network.computeIfAbsent(new Scalar(Tag.STR, "allow"), k -> new ArrayList<>());
        entries.forEach(e -> allow.add(new Scalar(Tag.STR, e)));
        if (!expected.equals(data(after))) {
            throw new PolicyException(
                    name, 0, KEY, "the entries cannot be added without changing other values; add them by hand");
        }
    }

    /** A scalar as data: its resolved tag and its value. */
    private record Scalar(Tag tag, String value) {}

    private static Object data(Node node) {
        return switch (node) {
            case ScalarNode s -> new Scalar(s.getTag(), s.getValue());
            case SequenceNode s -> {
                List<Object> list = new ArrayList<>();
                s.getValue().forEach(n -> list.add(data(n)));
                yield list;
            }
            case MappingNode m -> {
                Map<Object, Object> map = new LinkedHashMap<>();
                m.getValue().forEach(t -> map.put(data(t.getKeyNode()), data(t.getValueNode())));
                yield map;
            }
            default -> throw new IllegalStateException("unexpected node " + node.getNodeId());
        };
    }

    /** Anchors and aliases: one place in the text stands for several in the data, so an edit there edits both. */
    private void refuseAnchors(Node node, Set<Node> seen) throws PolicyException {
        if (node.getAnchor() != null || !seen.add(node)) {
            throw refuse(
                    node, "-", "anchors and aliases (&name, *name) cannot be edited safely; add the entries by hand");
        }
        if (node instanceof MappingNode m) {
            for (NodeTuple t : m.getValue()) {
                refuseAnchors(t.getKeyNode(), seen);
                refuseAnchors(t.getValueNode(), seen);
            }
        } else if (node instanceof CollectionNode<?> c) {
            for (Object child : c.getValue()) {
                refuseAnchors((Node) child, seen);
            }
        }
    }

    /** The key stands at the start of its line after spaces only: not {@code ? key}, not after another on its line. */
    private void requireBlockKey(NodeTuple tuple, String key) throws PolicyException {
        Node keyNode = tuple.getKeyNode();
        String text = lines.get(keyNode.getStartMark().getLine()).text();
        String before = text.substring(
                0, text.offsetByCodePoints(0, keyNode.getStartMark().getColumn()));
        if (!onlySpaces(before)) {
            throw refuse(keyNode, key, "an unusual key ('?' or on a line with others); add the entries by hand");
        }
    }

    private static boolean isKey(NodeTuple tuple, String key) {
        return tuple.getKeyNode() instanceof ScalarNode s && s.getValue().equals(key);
    }

    private Line line(String text) {
        return new Line(text, eol);
    }

    private PolicyException refuse(Node node, String key, String problem) {
        int line = node == null ? 0 : node.getStartMark().getLine() + 1;
        return new PolicyException(name, line, key, problem);
    }
}
