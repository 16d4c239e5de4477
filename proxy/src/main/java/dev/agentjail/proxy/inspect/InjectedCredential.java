package dev.agentjail.proxy.inspect;

import dev.agentjail.policy.CredentialRule;
import java.util.Objects;

/**
 * One credential the proxy injects: the jail holds only {@code placeholder}; in requests to the rule's
 * hosts, over verified TLS, in the rule's header, the proxy swaps it for {@code value}. Anywhere else
 * the placeholder is treated as a secret. {@link #toString()} never shows either string.
 */
public record InjectedCredential(CredentialRule rule, String placeholder, String value) {
    public InjectedCredential {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(placeholder, "placeholder");
        Objects.requireNonNull(value, "value");
        if (placeholder.length() < 16 || value.isEmpty()) {
            throw new IllegalArgumentException("a placeholder has at least 16 characters and a value is not empty");
        }
        if (placeholder.contains(value) || value.contains(placeholder)) {
            throw new IllegalArgumentException("the placeholder and the value must not contain each other");
        }
    }

    @Override
    public String toString() {
        return "InjectedCredential[env=" + rule.env() + ", header=" + rule.header() + ", hosts=" + rule.hosts() + "]";
    }
}
