package dev.agentjail.policy;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code limits} section of a policy into {@link Limits}; a missing key keeps its default. */
final class LimitsSection {
    static final Set<String> KEYS = Set.of("timeout", "memory", "processes", "open_files", "file_size", "tmp_size");

    private final YamlNodes nodes;

    LimitsSection(YamlNodes nodes) {
        this.nodes = nodes;
    }

    Limits read(Node limits) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(limits, "limits", KEYS);
        return new Limits(
                duration(entries.get("timeout"), "limits.timeout", Limits.DEFAULT_TIMEOUT),
                size(entries.get("memory"), "limits.memory", Limits.DEFAULT_MEMORY_BYTES),
                count(entries.get("processes"), "limits.processes", Limits.DEFAULT_PROCESSES, Limits.MAX_PROCESSES),
                count(entries.get("open_files"), "limits.open_files", Limits.DEFAULT_OPEN_FILES, Limits.MAX_OPEN_FILES),
                size(entries.get("file_size"), "limits.file_size", Limits.DEFAULT_FILE_SIZE_BYTES),
                size(entries.get("tmp_size"), "limits.tmp_size", Limits.DEFAULT_TMP_SIZE_BYTES));
    }

    private Duration duration(Node node, String path, Duration fallback) throws PolicyException {
        if (node == null) {
            return fallback;
        }
        String text = nodes.string(node, path);
        try {
            return Quantities.parseDuration(text);
        } catch (MalformedEntryException e) {
            throw nodes.error(node, path, "invalid duration " + Quoting.quote(text) + ": " + e.getMessage());
        }
    }

    private long size(Node node, String path, long fallback) throws PolicyException {
        if (node == null) {
            return fallback;
        }
        String text = nodes.string(node, path);
        try {
            return Quantities.parseSize(text);
        } catch (MalformedEntryException e) {
            throw nodes.error(node, path, "invalid size " + Quoting.quote(text) + ": " + e.getMessage());
        }
    }

    private int count(Node node, String path, int fallback, int max) throws PolicyException {
        if (node == null) {
            return fallback;
        }
        int count = nodes.integer(node, path);
        if (count < 1 || count > max) {
            throw nodes.error(node, path, "must be between 1 and " + max + ", got " + count);
        }
        return count;
    }
}
