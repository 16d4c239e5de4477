package dev.agentjail.policy;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code limits} section of a policy into {@link Limits}; a missing key keeps its default. */
final class LimitsSection {
    static final Set<String> KEYS =
            Set.of("timeout", "memory", "processes", "open_files", "file_size", "tmp_size", "address_space", "cpu");

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
                size(entries.get("tmp_size"), "limits.tmp_size", Limits.DEFAULT_TMP_SIZE_BYTES),
                size(entries.get("address_space"), "limits.address_space", 0),
                cpu(entries.get("cpu"), "limits.cpu"),
                entries.keySet());
    }

    /**
     * A CPU quota: a positive number of CPUs with at most three decimals ({@code 2}, {@code 0.5}), in thousandths.
     */
    static int parseCpu(String text) throws MalformedEntryException {
        String shape = "expected a number of CPUs (like 2 or 0.5)";
        if (!text.matches("[0-9]{1,4}(\\.[0-9]{1,3})?")) {
            throw new MalformedEntryException(shape);
        }
        int dot = text.indexOf('.');
        String whole = dot < 0 ? text : text.substring(0, dot);
        String fraction = dot < 0 ? "" : text.substring(dot + 1);
        if (whole.length() > 1 && whole.charAt(0) == '0') {
            throw new MalformedEntryException("leading zeros are not allowed");
        }
        int millis = Integer.parseInt(whole) * 1000 + Integer.parseInt((fraction + "000").substring(0, 3));
        if (millis == 0) {
            throw new MalformedEntryException("must be positive");
        }
        if (millis > Limits.MAX_CPU_MILLIS) {
            throw new MalformedEntryException("more than 1024 CPUs");
        }
        return millis;
    }

    private int cpu(Node node, String path) throws PolicyException {
        if (node == null) {
            return 0;
        }
        String text = nodes.string(node, path);
        try {
            return parseCpu(text);
        } catch (MalformedEntryException e) {
            throw nodes.error(node, path, "invalid CPU quota " + Quoting.quote(text) + ": " + e.getMessage());
        }
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
