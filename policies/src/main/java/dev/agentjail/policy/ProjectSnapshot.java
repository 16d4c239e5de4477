package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The files of a project layer as they were loaded: the project directory (a real path, the key under which trust
 * is recorded), the SHA-256 of every project-layer file's bytes, by real path: the {@code .agentjail.yaml} files and
 * each file they extend, in merge order; and the identities of the widening entries found in them ({@link
 * ProjectTrust#entryId}), so that trust covers exactly the entries the user was shown.
 */
public record ProjectSnapshot(Path root, Map<String, String> files, Set<String> entries) {
    public ProjectSnapshot {
        Objects.requireNonNull(root, "root");
        if (!root.isAbsolute()) {
            throw new IllegalArgumentException("root must be absolute: " + root);
        }
        files = Collections.unmodifiableMap(new LinkedHashMap<>(files));
        entries = Collections.unmodifiableSet(new TreeSet<>(entries));
    }

    public ProjectSnapshot(Path root, Map<String, String> files) {
        this(root, files, Set.of());
    }
}
