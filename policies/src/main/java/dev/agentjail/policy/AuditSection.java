package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code audit} section of a policy into {@link AuditSettings}. */
final class AuditSection {
    static final Set<String> KEYS = Set.of("log", "format", "exec", "files", "failure");

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
        boolean exec = onOff(entries.get("exec"), "audit.exec");
        boolean files = onOff(entries.get("files"), "audit.files");
        boolean failClosed = true;
        Node failure = entries.get("failure");
        if (failure != null) {
            String text = nodes.string(failure, "audit.failure");
            if (!text.equals("closed") && !text.equals("open")) {
                throw nodes.error(
                        failure,
                        "audit.failure",
                        "expected closed (a failed supervisor stops the jail's execs and file changes) or open (they"
                                + " go on unrecorded), got " + Quoting.quote(text));
            }
            failClosed = text.equals("closed");
        }
        return new AuditSettings(log, format, exec, files, failClosed);
    }

    /** {@code on} or {@code off} (YAML reads them as booleans; true and false are taken too); absent is on. */
    boolean onOff(Node node, String path) throws PolicyException {
        if (node == null) {
            return true;
        }
        String text = nodes.string(node, path);
        return switch (text) {
            case "on", "true" -> true;
            case "off", "false" -> false;
            default -> throw nodes.error(node, path, "expected on or off, got " + Quoting.quote(text));
        };
    }
}
