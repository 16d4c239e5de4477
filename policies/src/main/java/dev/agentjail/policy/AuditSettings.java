package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code audit} section: where {@code agentjail run} writes its audit log when no {@code --audit-log} is given
 * ({@code log}, absolute), the record format ({@code jsonl}, the only native format; {@code agentjail log export}
 * converts to ECS and OCSF), whether the programs the jail runs ({@code exec}) and the changes to its file tree
 * ({@code files}) are recorded, and what happens when the supervisor that records them fails ({@code failure}: {@code
 * closed} stops the jail's execs and file changes, {@code open} lets them go on unrecorded and says how many).
 */
public record AuditSettings(Optional<Path> log, String format, boolean exec, boolean files, boolean failClosed) {
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

    /** With the exec and file audit at their defaults (on, fail closed). */
    public AuditSettings(Optional<Path> log, String format) {
        this(log, format, true, true, true);
    }

    public static AuditSettings defaults() {
        return new AuditSettings(Optional.empty(), FORMAT_JSONL);
    }
}
