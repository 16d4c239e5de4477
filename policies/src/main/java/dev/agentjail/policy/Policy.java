package dev.agentjail.policy;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * An effective, validated policy (schema version 1): what the proxy lets out ({@code network}),
 * how it treats what passes ({@code tls}, {@code redaction}, {@code credentials}) and what the jail
 * looks like ({@code filesystem}, {@code env}, {@code limits}, {@code jail}), which MCP servers
 * and tools are approved ({@code mcp}) and where the record goes ({@code audit}). {@code source}
 * names where it came from. Immutable.
 */
public record Policy(
        int version,
        NetworkPolicy network,
        FilesystemPolicy filesystem,
        EnvPolicy env,
        Limits limits,
        JailSettings jail,
        String source,
        TlsSettings tls,
        RedactionPolicy redaction,
        List<CredentialRule> credentials,
        McpPolicy mcp,
        AuditSettings audit) {
    public Policy {
        Objects.requireNonNull(mcp, "mcp");
        Objects.requireNonNull(audit, "audit");
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(filesystem, "filesystem");
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(jail, "jail");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(redaction, "redaction");
        credentials = List.copyOf(credentials);
        var names = new HashSet<String>();
        for (CredentialRule rule : credentials) {
            if (!names.add(rule.env())) {
                throw new IllegalArgumentException("two credential rules for " + rule.env());
            }
            // A forwarded or fixed value would put the real credential (or a wrong one) into the jail.
            if (env.forward().contains(rule.env()) || env.set().containsKey(rule.env())) {
                throw new IllegalArgumentException("credential variable also in env: " + rule.env());
            }
        }
    }

    /** Without the MCP and audit sections (at their defaults). */
    public Policy(
            int version,
            NetworkPolicy network,
            FilesystemPolicy filesystem,
            EnvPolicy env,
            Limits limits,
            JailSettings jail,
            String source,
            TlsSettings tls,
            RedactionPolicy redaction,
            List<CredentialRule> credentials) {
        this(
                version,
                network,
                filesystem,
                env,
                limits,
                jail,
                source,
                tls,
                redaction,
                credentials,
                McpPolicy.none(),
                AuditSettings.defaults());
    }

    /** Without the inspection sections: upstream TLS, redaction and credentials at their defaults. */
    public Policy(
            int version,
            NetworkPolicy network,
            FilesystemPolicy filesystem,
            EnvPolicy env,
            Limits limits,
            JailSettings jail,
            String source) {
        this(
                version,
                network,
                filesystem,
                env,
                limits,
                jail,
                source,
                TlsSettings.defaults(),
                RedactionPolicy.defaults(),
                List.of());
    }

    /** Network rules only; every other section at its default. */
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
