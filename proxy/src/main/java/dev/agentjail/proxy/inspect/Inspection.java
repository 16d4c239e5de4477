package dev.agentjail.proxy.inspect;

import dev.agentjail.policy.RedactionPolicy;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What the proxy looks for in outbound requests it can read (plain HTTP, and HTTPS it intercepts):
 * the policy's redaction rules, the exact values of host secrets it names ({@code knownValues}, by
 * name, e.g. {@code AWS_SECRET_ACCESS_KEY}), and the credentials it injects. {@link #toString()} never
 * shows a value.
 */
public record Inspection(
        RedactionPolicy redaction, Map<String, String> knownValues, List<InjectedCredential> credentials) {
    public Inspection {
        Objects.requireNonNull(redaction, "redaction");
        knownValues = java.util.Collections.unmodifiableMap(new TreeMap<>(knownValues));
        credentials = List.copyOf(credentials);
    }

    /** The built-in catalog, action redact, nothing known, nothing injected. */
    public static Inspection defaults() {
        return new Inspection(RedactionPolicy.defaults(), Map.of(), List.of());
    }

    @Override
    public String toString() {
        return "Inspection[redaction=" + redaction + ", knownValues=" + knownValues.keySet() + ", credentials="
                + credentials + "]";
    }
}
