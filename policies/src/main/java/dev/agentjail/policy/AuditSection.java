package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code audit} section of a policy into {@link AuditSettings}. */
final class AuditSection {
    static final Set<String> KEYS = Set.of("log", "format");

    private final YamlNodes nodes;
    private final PolicyFiles files;

    AuditSection(YamlNodes nodes, PolicyFiles files) {
        this.nodes = nodes;
        this.files = files;
    }

    AuditSettings read(Node audit) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(audit, "audit", KEYS);
        Node logNode = entries.get("log");
        Optional<Path> log = logNode == null ? Optional.empty() : Optional.of(files.read(nodes, logNode, "audit.log"));
        Node formatNode = entries.get("format");
        String format = AuditSettings.FORMAT_JSONL;
        if (formatNode != null) {
            format = nodes.string(formatNode, "audit.format");
            if (!format.equals(AuditSettings.FORMAT_JSONL)) {
                throw nodes.error(
                        formatNode,
                        "audit.format",
                        "unsupported format " + Quoting.quote(format)
                                + " (the log is always jsonl; agentjail log export writes ecs and ocsf)");
            }
        }
        return new AuditSettings(log, format);
    }
}
