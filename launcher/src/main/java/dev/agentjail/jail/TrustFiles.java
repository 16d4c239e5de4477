package dev.agentjail.jail;

import java.nio.file.Path;

/**
 * The host files that make the jail trust agentjail's CA with no flags: a PEM bundle (the system roots plus the
 * CA), bound read-only at {@link JailPaths#CA_BUNDLE}, and the same certificates as a PKCS#12 trust store for the
 * JVM, bound read-only at {@link JailPaths#TRUST_STORE}. Neither holds a key.
 *
 * @param pemBundle the host path of the PEM bundle
 * @param trustStore the host path of the PKCS#12 trust store
 */
public record TrustFiles(Path pemBundle, Path trustStore) {
    /** The trust store's type, as {@code javax.net.ssl.trustStoreType} names it. */
    public static final String TRUST_STORE_TYPE = "PKCS12";

    /**
     * The trust store's password. It protects nothing (the store holds public certificates only), so it is fixed
     * and public; the JVM wants one to check the store's integrity.
     */
    public static final String TRUST_STORE_PASSWORD = "changeit";

    public TrustFiles {
        JailPaths.absolute(pemBundle, "CA bundle");
        JailPaths.absolute(trustStore, "trust store");
        if (pemBundle.equals(trustStore)) {
            throw new IllegalArgumentException("the CA bundle and the trust store must be two files: " + pemBundle);
        }
    }
}
