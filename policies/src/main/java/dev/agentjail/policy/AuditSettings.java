package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code audit} section: where {@code agentjail run} writes its audit log when no {@code
 * --audit-log} is given ({@code log}, absolute), and the record format ({@code jsonl}, the only
 * native format; {@code agentjail log export} converts to ECS and OCSF).
 */
public record AuditSettings(Optional<Path> log, String format) {
    public static final String FORMAT_JSONL = "jsonl";

    public AuditSettings {
        Objects.requireNonNull(log, "log");
        log.ifPresent(path -> {
            if (!path.isAbsolute()) {
                throw new IllegalArgumentException("log must be absolute: " + path);
            }
        });
        if (!FORMAT_JSONL.equals(format)) {
            throw new IllegalArgumentException("unsupported audit format: " + format);
        }
    }

    public static AuditSettings defaults() {
        return new AuditSettings(Optional.empty(), FORMAT_JSONL);
    }
}
