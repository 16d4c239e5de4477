package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code redaction} section of a policy into a {@link RedactionPolicy}. */
final class RedactionSection {
    static final Set<String> KEYS = Set.of("action", "patterns", "known_values", "allow");
    private static final Set<String> PATTERN_KEYS = Set.of("name", "regex");
    private static final Set<String> KNOWN_VALUE_KEYS = Set.of("env", "file");

    private final YamlNodes nodes;
    private final PolicyFiles files;

    RedactionSection(YamlNodes nodes, PolicyFiles files) {
        this.nodes = nodes;
        this.files = files;
    }

    RedactionPolicy read(Node redaction) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(redaction, "redaction", KEYS);
        RedactionPolicy.Action action = action(entries.get("action"), "redaction.action");
        List<CustomPattern> patterns = patterns(entries.get("patterns"), "redaction.patterns");
        List<KnownValue> knownValues = knownValues(entries.get("known_values"), "redaction.known_values");
        List<String> allow = allow(entries.get("allow"), "redaction.allow");
        return new RedactionPolicy(action, patterns, knownValues, allow);
    }

    private RedactionPolicy.Action action(Node node, String path) throws PolicyException {
        if (node == null) {
            return RedactionPolicy.Action.REDACT;
        }
        String text = nodes.string(node, path);
        return switch (text) {
            case "redact" -> RedactionPolicy.Action.REDACT;
            case "block" -> RedactionPolicy.Action.BLOCK;
            default -> throw nodes.error(node, path, "expected redact or block, got " + Quoting.quote(text));
        };
    }

    private List<CustomPattern> patterns(Node node, String path) throws PolicyException {
        List<CustomPattern> patterns = new ArrayList<>();
        if (node == null) {
            return patterns;
        }
        Map<String, String> seen = new HashMap<>();
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            Node item = items.get(i);
            Map<String, Node> fields = nodes.mapping(item, itemPath, PATTERN_KEYS);
            Node nameNode = nodes.required(fields, item, itemPath, "name");
            Node regexNode = nodes.required(fields, item, itemPath, "regex");
            String namePath = itemPath + ".name";
            String name = nodes.string(nameNode, namePath);
            Optional<String> nameProblem = CustomPattern.nameProblem(name);
            if (nameProblem.isPresent()) {
                throw nodes.error(nameNode, namePath, nameProblem.get());
            }
            String earlier = seen.putIfAbsent(name, namePath);
            if (earlier != null) {
                throw nodes.error(nameNode, namePath, Quoting.quote(name) + " is already used at " + earlier);
            }
            String regexPath = itemPath + ".regex";
            String regex = nodes.string(regexNode, regexPath);
            try {
                patterns.add(CustomPattern.of(name, regex));
            } catch (MalformedEntryException e) {
                throw nodes.error(
                        regexNode, regexPath, "invalid pattern " + Quoting.quote(regex) + ": " + e.getMessage());
            }
        }
        return patterns;
    }

    private List<KnownValue> knownValues(Node node, String path) throws PolicyException {
        List<KnownValue> values = new ArrayList<>();
        if (node == null) {
            return values;
        }
        Map<KnownValue, String> seen = new HashMap<>();
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            Node item = items.get(i);
            Map<String, Node> fields = nodes.mapping(item, itemPath, KNOWN_VALUE_KEYS);
            Node envNode = fields.get("env");
            Node fileNode = fields.get("file");
            if (envNode != null && fileNode != null) {
                throw nodes.error(item, itemPath, "give either 'env' or 'file', not both");
            }
            KnownValue value;
            Node valueNode;
            if (envNode != null) {
                valueNode = envNode;
                value = KnownValue.env(EnvSection.name(nodes, envNode, itemPath + ".env"));
            } else if (fileNode != null) {
                valueNode = fileNode;
                value = KnownValue.file(files.read(nodes, fileNode, itemPath + ".file"));
            } else {
                throw nodes.error(item, itemPath, "expected 'env' or 'file'");
            }
            String earlier = seen.putIfAbsent(value, itemPath);
            if (earlier != null) {
                throw nodes.error(valueNode, itemPath, "the same value is already listed at " + earlier);
            }
            values.add(value);
        }
        return values;
    }

    private List<String> allow(Node node, String path) throws PolicyException {
        List<String> allow = new ArrayList<>();
        if (node == null) {
            return allow;
        }
        Map<String, String> seen = new HashMap<>();
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String value = nodes.string(items.get(i), itemPath);
            // The value is never echoed: it may be a real secret written here by mistake.
            if (value.length() < RedactionPolicy.MIN_ALLOWED_LENGTH) {
                throw nodes.error(
                        items.get(i),
                        itemPath,
                        "too short (" + value.length() + " characters): an allow-listed value needs at least "
                                + RedactionPolicy.MIN_ALLOWED_LENGTH
                                + ", so it cannot exempt a fragment of a real secret");
            }
            String earlier = seen.putIfAbsent(value, itemPath);
            if (earlier != null) {
                throw nodes.error(items.get(i), itemPath, "the same value is already listed at " + earlier);
            }
            allow.add(value);
        }
        return allow;
    }
}
