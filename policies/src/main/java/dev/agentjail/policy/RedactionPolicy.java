package dev.agentjail.policy;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What the proxy does with secrets it finds in outgoing requests, beyond its built-in catalog: the
 * {@code action}, extra secret formats ({@code patterns}), exact host secrets to find ({@code
 * knownValues}) and exact values that are never treated as secrets ({@code allow}, for false
 * positives).
 */
public record RedactionPolicy(
        Action action, List<CustomPattern> patterns, List<KnownValue> knownValues, List<String> allow) {
    /** Shortest allow-listed value: shorter ones would exempt fragments of real secrets. */
    public static final int MIN_ALLOWED_LENGTH = 8;

    /** What happens to a request that carries a secret. */
    public enum Action {
        /** Replace each secret with a marker that keeps the request valid, and send it. */
        REDACT,
        /** Refuse the request with a 403 and record it. */
        BLOCK
    }

    public RedactionPolicy {
        Objects.requireNonNull(action, "action");
        patterns = List.copyOf(patterns);
        knownValues = List.copyOf(knownValues);
        allow = List.copyOf(allow);
        Set<String> names = new HashSet<>();
        for (CustomPattern pattern : patterns) {
            if (!names.add(pattern.name())) {
                throw new IllegalArgumentException("pattern name used twice: " + pattern.name());
            }
        }
        if (new HashSet<>(knownValues).size() != knownValues.size()) {
            throw new IllegalArgumentException("known value listed twice");
        }
        for (String value : allow) {
            if (value.length() < MIN_ALLOWED_LENGTH) {
                throw new IllegalArgumentException("allow-listed value shorter than " + MIN_ALLOWED_LENGTH);
            }
        }
        if (new HashSet<>(allow).size() != allow.size()) {
            throw new IllegalArgumentException("allow-listed value listed twice");
        }
    }

    /** Redact with the built-in catalog only. */
    public static RedactionPolicy defaults() {
        return new RedactionPolicy(Action.REDACT, List.of(), List.of(), List.of());
    }
}
