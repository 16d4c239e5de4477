package dev.agentjail.certs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.List;
import java.util.stream.Stream;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TrustBundleTest {
    @TempDir
    Path tmp;

    @Test
    void theBundleHoldsTheSystemRootsPlusOurCa() throws Exception {
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(tmp.resolve("ca"), Clock.systemUTC());
        int systemRoots =
                Pem.decodeAll(TrustBundle.systemRootsPem(), Pem.CERTIFICATE).size();
        assertTrue(systemRoots > 0);
        Path systemBundle = TrustBundle.SYSTEM_BUNDLES.stream()
                .filter(Files::isRegularFile)
                .findFirst()
                .orElse(null);
        if (systemBundle != null) {
            assertEquals(TrustBundle.readPem(systemBundle).size(), systemRoots);
        }

        Path bundle = tmp.resolve("session/ca-bundle.pem");
        TrustBundle.write(bundle, ca);

        List<X509Certificate> certificates = TrustBundle.readPem(bundle);
        assertEquals(systemRoots + 1, certificates.size());
        assertEquals(ca.certificate(), certificates.get(certificates.size() - 1));
        assertEquals("rw-r--r--", CertificateAuthorityTest.mode(bundle));

        // Rewriting replaces the file and leaves no temporary file behind.
        TrustBundle.write(bundle, ca);
        assertEquals(systemRoots + 1, TrustBundle.readPem(bundle).size());
        try (Stream<Path> files = Files.list(bundle.getParent())) {
            assertEquals(List.of(bundle), files.toList());
        }
    }

    @Test
    void withoutASystemBundleTheJdkTrustStoreIsExported() throws Exception {
        String pem = TrustBundle.systemRootsPem(List.of(tmp.resolve("missing.crt")));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init((KeyStore) null);
        int jdkRoots = ((X509TrustManager) tmf.getTrustManagers()[0]).getAcceptedIssuers().length;
        Path file = tmp.resolve("jdk.pem");
        Files.writeString(file, pem);
        assertEquals(jdkRoots, TrustBundle.readPem(file).size());
    }

    @Test
    void aCandidateWithoutCertificatesIsSkipped() throws Exception {
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(tmp.resolve("ca"), Clock.systemUTC());
        Path empty = tmp.resolve("empty.crt");
        Files.writeString(empty, "# nothing here\n");
        Path one = tmp.resolve("one.crt");
        Files.writeString(one, "# a comment\r\n" + ca.certificatePem().replace("\n", "\r\n") + "trailing text\n");
        String pem = TrustBundle.systemRootsPem(List.of(tmp.resolve("missing"), empty, one));
        assertEquals(ca.certificatePem(), pem);
    }

    @Test
    void readPemNamesTheFileOnBadInput() throws Exception {
        Path empty = tmp.resolve("empty.pem");
        Files.writeString(empty, "hello\n");
        IOException none = assertThrows(IOException.class, () -> TrustBundle.readPem(empty));
        assertTrue(none.getMessage().startsWith(empty.toString()), none.getMessage());

        Path garbage = tmp.resolve("garbage.pem");
        Files.writeString(garbage, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        IOException bad = assertThrows(IOException.class, () -> TrustBundle.readPem(garbage));
        assertTrue(bad.getMessage().startsWith(garbage + ": certificate 1"), bad.getMessage());

        Path junk = tmp.resolve("junk.pem");
        Files.writeString(junk, "-----BEGIN CERTIFICATE-----\nAA!A\n-----END CERTIFICATE-----\n");
        IOException invalid = assertThrows(IOException.class, () -> TrustBundle.readPem(junk));
        assertFalse(invalid.getMessage().isEmpty());
    }
}
