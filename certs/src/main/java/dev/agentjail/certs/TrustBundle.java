package dev.agentjail.certs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The CA bundle the jail's runtimes read: the host's system roots plus our CA, in one PEM file. The
 * host's own trust store is only ever read.
 */
public final class TrustBundle {
    /**
     * Where distributions keep their PEM bundle, most common first: Debian/Ubuntu/Arch, Fedora/RHEL,
     * openSUSE, OpenELEC, CentOS/RHEL 7, Alpine.
     */
    static final List<Path> SYSTEM_BUNDLES = List.of(
            Path.of("/etc/ssl/certs/ca-certificates.crt"),
            Path.of("/etc/pki/tls/certs/ca-bundle.crt"),
            Path.of("/etc/ssl/ca-bundle.pem"),
            Path.of("/etc/pki/tls/cacert.pem"),
            Path.of("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"),
            Path.of("/etc/ssl/cert.pem"));

    private TrustBundle() {}

    /**
     * The system's root certificates as PEM: the first distribution bundle that exists and holds
     * certificates, else the JDK's default trust store exported.
     */
    public static String systemRootsPem() throws IOException {
        return systemRootsPem(SYSTEM_BUNDLES);
    }

    static String systemRootsPem(List<Path> candidates) throws IOException {
        for (Path candidate : candidates) {
            if (!Files.isRegularFile(candidate)) {
                continue;
            }
            List<String> blocks = Pem.blocks(Files.readString(candidate, StandardCharsets.ISO_8859_1), Pem.CERTIFICATE);
            if (!blocks.isEmpty()) {
                return String.join("", blocks);
            }
        }
        return jdkRootsPem();
    }

    /** Writes the system roots followed by {@code ca}'s certificate to {@code file}, atomically, mode 0644. */
    public static void write(Path file, CertificateAuthority ca) throws IOException {
        // Pure PEM, no comment lines: some readers (the JDK's among them) are strict about text between blocks.
        String text = systemRootsPem() + ca.certificatePem();
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        SecureFiles.writeAtomically(file, text.getBytes(StandardCharsets.US_ASCII), SecureFiles.WORLD_READABLE);
    }

    /**
     * Every certificate in a PEM file (text outside the BEGIN/END CERTIFICATE blocks is ignored).
     *
     * @throws IOException naming the file when it cannot be read, holds no certificate or a bad one
     */
    public static List<X509Certificate> readPem(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.ISO_8859_1);
        List<byte[]> ders;
        try {
            ders = Pem.decodeAll(text, Pem.CERTIFICATE);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": invalid PEM: " + e.getMessage(), e);
        }
        if (ders.isEmpty()) {
            throw new IOException(file + ": no PEM certificate (-----BEGIN CERTIFICATE-----) found");
        }
        List<X509Certificate> certificates = new ArrayList<>(ders.size());
        for (int i = 0; i < ders.size(); i++) {
            try {
                certificates.add(CertificateAuthority.parseCertificate(ders.get(i)));
            } catch (CertificateException e) {
                throw new IOException(file + ": certificate " + (i + 1) + " is invalid: " + e.getMessage(), e);
            }
        }
        return List.copyOf(certificates);
    }

    private static String jdkRootsPem() throws IOException {
        try {
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init((KeyStore) null);
            StringBuilder out = new StringBuilder();
            for (TrustManager manager : factory.getTrustManagers()) {
                if (manager instanceof X509TrustManager x509) {
                    for (X509Certificate root : x509.getAcceptedIssuers()) {
                        out.append(Pem.encode(root));
                    }
                }
            }
            if (out.isEmpty()) {
                throw new IOException("no system CA bundle found (looked in " + SYSTEM_BUNDLES
                        + ") and the JDK's trust store is empty");
            }
            return out.toString();
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot read the JDK's default trust store: " + e.getMessage(), e);
        }
    }
}
