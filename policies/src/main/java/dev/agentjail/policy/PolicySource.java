package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One policy document's identity: its layer, the name messages use for it (a file path, or {@code
 * preset:NAME}), and the directory its relative file entries are relative to.
 */
public record PolicySource(PolicyLayer layer, String name, Path baseDir) {
    public PolicySource {
        Objects.requireNonNull(layer, "layer");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(baseDir, "baseDir");
        if (!baseDir.isAbsolute()) {
            throw new IllegalArgumentException("baseDir must be absolute: " + baseDir);
        }
    }
}
