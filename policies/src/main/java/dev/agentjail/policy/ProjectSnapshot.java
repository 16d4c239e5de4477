package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The files of a project layer as they were loaded: the project directory (a real path, the key under which trust
 * is recorded) and the SHA-256 of every project-layer file's bytes, by real path: the {@code .agentjail.yaml} and
 * each file it extends, in merge order.
 */
public record ProjectSnapshot(Path root, Map<String, String> files) {
    public ProjectSnapshot {
        Objects.requireNonNull(root, "root");
        if (!root.isAbsolute()) {
            throw new IllegalArgumentException("root must be absolute: " + root);
        }
        files = Collections.unmodifiableMap(new LinkedHashMap<>(files));
    }
}
