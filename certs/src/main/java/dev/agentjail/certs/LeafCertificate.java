package dev.agentjail.certs;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Objects;

/**
 * A server certificate for one host, with its key and the chain to present (leaf first, then the
 * CA).
 */
public record LeafCertificate(PrivateKey key, X509Certificate[] chain, Instant notAfter) {
    public LeafCertificate {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(notAfter, "notAfter");
        if (chain.length != 2) {
            throw new IllegalArgumentException("chain must be leaf and CA");
        }
        chain = chain.clone();
    }

    /** A copy of the chain: the leaf, then the CA. */
    @Override
    public X509Certificate[] chain() {
        return chain.clone();
    }

    /** The leaf certificate itself. */
    public X509Certificate certificate() {
        return chain[0];
    }
}
