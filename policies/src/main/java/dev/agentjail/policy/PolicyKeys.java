package dev.agentjail.policy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/** The keys of schema version 1, in one place: what a file may hold and what {@code locked} may name. */
final class PolicyKeys {
    /** How presets are named as sources, e.g. {@code preset:claude-code}. */
    static final String PRESET_SOURCE_PREFIX = "preset:";

    /** The sections, each with its keys; {@code credentials} is a list and has no keys to lock. */
    static final Map<String, Set<String>> SECTIONS = sections();

    /** Everything a document may hold at the top level. */
    static final Set<String> TOP_LEVEL = topLevel();

    /** A built-in preset may also describe itself. */
    static final Set<String> PRESET_TOP_LEVEL = presetTopLevel();

    private PolicyKeys() {}

    private static Map<String, Set<String>> sections() {
        Map<String, Set<String>> sections = new LinkedHashMap<>();
        sections.put("network", NetworkSection.KEYS);
        sections.put("mcp", McpSection.KEYS);
        sections.put("tls", TlsSection.KEYS);
        sections.put("redaction", RedactionSection.KEYS);
        sections.put("credentials", Set.of());
        sections.put("filesystem", FilesystemSection.KEYS);
        sections.put("env", EnvSection.KEYS);
        sections.put("limits", LimitsSection.KEYS);
        sections.put("jail", JailSection.KEYS);
        sections.put("audit", AuditSection.KEYS);
        sections.put(TrustSection.SECTION, TrustSection.KEYS);
        return Map.copyOf(sections);
    }

    private static Set<String> topLevel() {
        var keys = new TreeSet<>(SECTIONS.keySet());
        keys.addAll(Set.of("version", "extends", "locked"));
        return Set.copyOf(keys);
    }

    private static Set<String> presetTopLevel() {
        var keys = new TreeSet<>(topLevel());
        keys.add("preset");
        return Set.copyOf(keys);
    }

    /** Why {@code path} cannot be locked, if it cannot: it must be a section or {@code section.key}. */
    static Optional<String> lockProblem(String path) {
        int dot = path.indexOf('.');
        String section = dot < 0 ? path : path.substring(0, dot);
        Set<String> keys = SECTIONS.get(section);
        if (keys == null) {
            Optional<String> nearest = YamlNodes.nearest(section, SECTIONS.keySet());
            return Optional.of("unknown section " + Quoting.quote(section)
                    + nearest.map(n -> " (did you mean " + Quoting.quote(n) + "?)")
                            .orElse(""));
        }
        if (dot < 0) {
            return Optional.empty();
        }
        String key = path.substring(dot + 1);
        if (!keys.contains(key)) {
            Optional<String> nearest = YamlNodes.nearest(key, keys);
            return Optional.of("unknown key " + Quoting.quote(key) + " in " + section
                    + nearest.map(n -> " (did you mean " + Quoting.quote(section + "." + n) + "?)")
                            .orElse(""));
        }
        return Optional.empty();
    }
}
