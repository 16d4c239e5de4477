package dev.agentjail.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed certificate for {@code upstream.test} (and 127.0.0.1), made with the JDK's keytool. Servers use
 * {@link #keystore()}; clients trust exactly {@link #certificatePem()} or {@link #clientContext()}, never anything else
 * and never trust-all.
 */
public final class TestTls {
    public static final String HOST = "upstream.test";
    public static final String PASSWORD = "changeit";

    private final Path keystore;
    private final Path certificatePem;
    private final X509Certificate certificate;

    private TestTls(Path keystore, Path certificatePem, X509Certificate certificate) {
        this.keystore = keystore;
        this.certificatePem = certificatePem;
        this.certificate = certificate;
    }

    /** The certificate every test in this JVM shares: keytool is slow to start, and the key is never modified. */
    public static TestTls shared() {
        return Shared.INSTANCE;
    }

    /** Generates the key pair and certificate under {@code dir}. */
    public static TestTls create(Path dir) throws IOException, GeneralSecurityException {
        return create(dir, List.of());
    }

    /**
     * Generates the key pair and a certificate under {@code dir} that also names {@code hosts} (a stub of a real API
     * host, reached through the policy's {@code network.resolve}).
     */
    public static TestTls create(Path dir, List<String> hosts) throws IOException, GeneralSecurityException {
        StringBuilder san = new StringBuilder("san=dns:" + HOST);
        hosts.forEach(h -> san.append(",dns:").append(h));
        san.append(",ip:127.0.0.1");
        Path keystore = dir.resolve("upstream.p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Command.Result r = Command.run(
                Duration.ofSeconds(60),
                List.of(
                        keytool.toString(),
                        "-genkeypair",
                        "-alias",
                        "upstream",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=" + HOST,
                        "-ext",
                        san.toString(),
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        keystore.toString(),
                        "-storepass",
                        PASSWORD,
                        "-keypass",
                        PASSWORD));
        assertEquals(0, r.exitCode(), () -> "keytool failed: " + r.describe());
        KeyStore ks = load(keystore);
        X509Certificate cert = (X509Certificate) ks.getCertificate("upstream");
        Path pem = dir.resolve("upstream.pem");
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(cert.getEncoded());
        Files.writeString(pem, "-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----\n");
        return new TestTls(keystore, pem, cert);
    }

    /** The PKCS#12 keystore holding the server key (store and key password {@value #PASSWORD}). */
    public Path keystore() {
        return keystore;
    }

    /** The certificate alone, PEM-encoded, for {@code curl --cacert} and Node's {@code ca}. */
    public Path certificatePem() {
        return certificatePem;
    }

    /** A client context whose only trust anchor is the test certificate. */
    public SSLContext clientContext() throws GeneralSecurityException, IOException {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("upstream", certificate);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** A server context presenting the test certificate. */
    public SSLContext serverContext() throws GeneralSecurityException, IOException {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(load(keystore), PASSWORD.toCharArray());
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    private static KeyStore load(Path file) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, PASSWORD.toCharArray());
        }
        return ks;
    }

    /** Creates the shared certificate on first use, in a directory removed when the JVM exits. */
    private static final class Shared {
        static final TestTls INSTANCE = create();

        private static TestTls create() {
            try {
                Path dir = Files.createTempDirectory("agentjail-it-tls");
                dir.toFile().deleteOnExit(); // registered first, so deleted last
                dir.resolve("upstream.p12").toFile().deleteOnExit();
                dir.resolve("upstream.pem").toFile().deleteOnExit();
                return TestTls.create(dir);
            } catch (IOException | GeneralSecurityException e) {
                throw new IllegalStateException("cannot create the test certificate", e);
            }
        }
    }
}
