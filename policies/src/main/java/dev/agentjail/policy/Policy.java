package dev.agentjail.policy;

import java.util.Objects;

/**
 * An effective, validated policy (schema version 1): what the proxy lets out ({@code network}) and
 * what the jail looks like ({@code filesystem}, {@code env}, {@code limits}, {@code jail}). {@code
 * source} names where it came from. Immutable.
 */
public record Policy(
        int version,
        NetworkPolicy network,
        FilesystemPolicy filesystem,
        EnvPolicy env,
        Limits limits,
        JailSettings jail,
        String source) {
    public Policy {
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(filesystem, "filesystem");
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(jail, "jail");
        Objects.requireNonNull(source, "source");
    }

    /** Network rules only; every jail section at its default. */
    public Policy(int version, NetworkPolicy network, String source) {
        this(
                version,
                network,
                FilesystemPolicy.none(),
                EnvPolicy.none(),
                Limits.defaults(),
                JailSettings.defaults(),
                source);
    }

    /** The embedded default: no network at all, and the jail's defaults for everything else. */
    public static Policy denyAll() {
        return new Policy(1, NetworkPolicy.none(), "<built-in deny-all>");
    }
}
