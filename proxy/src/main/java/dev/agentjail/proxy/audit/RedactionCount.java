package dev.agentjail.proxy.audit;

import java.util.Objects;

/**
 * How many secrets of one kind were found in one place of a request: {@code kind} is a catalog or
 * policy id ({@code github-pat}, {@code known:ANTHROPIC_API_KEY}), {@code location} is {@code target},
 * {@code header:<name>} or {@code body}. Never the value.
 */
public record RedactionCount(String kind, String location, int count) {
    public RedactionCount {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(location, "location");
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1");
        }
        kind = AuditRecord.bound(kind, AuditRecord.MAX_FIELD_CHARS);
        location = AuditRecord.bound(location, AuditRecord.MAX_FIELD_CHARS);
    }
}
