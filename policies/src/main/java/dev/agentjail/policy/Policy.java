package dev.agentjail.policy;

import java.util.Objects;

/** An effective, validated policy (schema version 1). Immutable. */
public record Policy(int version, NetworkPolicy network, String source) {
    public Policy {
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(source, "source");
    }

    /** The embedded default: no network at all. */
    public static Policy denyAll() {
        return new Policy(1, NetworkPolicy.none(), "<built-in deny-all>");
    }
}
