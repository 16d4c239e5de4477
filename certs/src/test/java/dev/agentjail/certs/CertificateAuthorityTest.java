package dev.agentjail.certs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertificateAuthorityTest {
    static final Instant T0 = Instant.parse("2025-03-01T12:00:00Z");
    static final Clock FIXED = Clock.fixed(T0, ZoneOffset.UTC);

    @TempDir
    Path tmp;

    @Test
    void createsAnEcP256CaWithTheRightExtensionsAndValidity() throws Exception {
        Path dir = tmp.resolve("nested/ca");
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(dir, FIXED);

        X509Certificate cert;
        try (InputStream in = Files.newInputStream(dir.resolve("ca.pem"))) {
            cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        assertEquals(ca.certificate(), cert);
        cert.verify(cert.getPublicKey());
        assertEquals(
                256,
                ((ECPublicKey) cert.getPublicKey())
                        .getParams()
                        .getCurve()
                        .getField()
                        .getFieldSize());
        assertEquals("SHA256withECDSA", cert.getSigAlgName());
        String subject = cert.getSubjectX500Principal().getName();
        assertTrue(subject.matches("CN=agentjail local CA \\(.+@.+\\),O=agentjail"), subject);
        assertEquals(subject, cert.getIssuerX500Principal().getName());
        assertEquals(0, cert.getBasicConstraints(), "CA:true, pathLen 0");
        boolean[] usage = cert.getKeyUsage();
        assertTrue(usage[5] && usage[6], "keyCertSign and cRLSign");
        assertEquals(2, countTrue(usage));
        assertEquals(Set.of("2.5.29.19", "2.5.29.15"), cert.getCriticalExtensionOIDs());
        assertNotNull(cert.getExtensionValue("2.5.29.14"), "subject key identifier");
        assertTrue(cert.getSerialNumber().signum() > 0 && cert.getSerialNumber().bitLength() <= 128);
        assertEquals(T0.minus(Duration.ofHours(1)), cert.getNotBefore().toInstant());
        assertEquals(Instant.parse("2035-03-01T12:00:00Z"), cert.getNotAfter().toInstant());
        assertEquals(cert.getNotAfter().toInstant(), ca.notAfter());
        assertEquals(dir, ca.directory());
        assertEquals(Files.readString(dir.resolve("ca.pem")), ca.certificatePem());
    }

    @Test
    void filesGetOwnerOnlyModesAndNoTemporaryFilesRemain() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority.loadOrCreate(dir, FIXED);
        assertEquals("rwx------", mode(dir));
        assertEquals("rw-------", mode(dir.resolve("ca-key.pem")));
        assertEquals("rw-r--r--", mode(dir.resolve("ca.pem")));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(
                    Set.of("ca.pem", "ca-key.pem", ".lock", ".pair-checked"),
                    files.map(p -> p.getFileName().toString()).collect(Collectors.toSet()));
        }
        assertTrue(Files.readString(dir.resolve("ca-key.pem")).startsWith("-----BEGIN PRIVATE KEY-----\n"));
    }

    @Test
    void reloadingGivesTheSameCaAndFingerprint() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority first = CertificateAuthority.loadOrCreate(dir, FIXED);
        CertificateAuthority again = CertificateAuthority.loadOrCreate(dir, Clock.systemUTC());
        CertificateAuthority loaded = CertificateAuthority.load(dir);
        assertEquals(first.sha256Fingerprint(), again.sha256Fingerprint());
        assertEquals(first.sha256Fingerprint(), loaded.sha256Fingerprint());
        assertEquals(first.certificate(), loaded.certificate());
        assertEquals(first.privateKey(), loaded.privateKey());

        byte[] digest =
                MessageDigest.getInstance("SHA-256").digest(first.certificate().getEncoded());
        assertEquals(HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest), first.sha256Fingerprint());
        assertTrue(first.sha256Fingerprint().matches("([0-9A-F]{2}:){31}[0-9A-F]{2}"));
    }

    @Test
    void refusesAKeyFileOthersCanRead() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority.loadOrCreate(dir, FIXED);
        Path key = dir.resolve("ca-key.pem");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));

        CaException e = assertThrows(CaException.class, () -> CertificateAuthority.load(dir));
        assertTrue(e.getMessage().contains(key.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("0644"), e.getMessage());
        assertTrue(e.getMessage().contains("chmod 600 " + key), e.getMessage());
        assertThrows(CaException.class, () -> CertificateAuthority.loadOrCreate(dir, FIXED));

        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        assertNotNull(CertificateAuthority.load(dir));
    }

    @Test
    void loadWithoutACaSaysHowToCreateOne() {
        CaException missingDir = assertThrows(CaException.class, () -> CertificateAuthority.load(tmp.resolve("none")));
        assertTrue(missingDir.getMessage().contains("agentjail ca init"), missingDir.getMessage());
        CaException emptyDir = assertThrows(CaException.class, () -> CertificateAuthority.load(tmp));
        assertTrue(emptyDir.getMessage().contains("agentjail ca init"), emptyDir.getMessage());
        assertTrue(emptyDir.getMessage().contains(tmp.toString()), emptyDir.getMessage());
        assertEquals(false, CertificateAuthority.exists(tmp));
    }

    @Test
    void anIncompleteCaNamesTheMissingFile() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority.loadOrCreate(dir, FIXED);
        Files.delete(dir.resolve("ca.pem"));
        CaException e = assertThrows(CaException.class, () -> CertificateAuthority.loadOrCreate(dir, FIXED));
        assertTrue(e.getMessage().contains(dir.resolve("ca.pem") + " is missing"), e.getMessage());
    }

    @Test
    void corruptFilesAreNamed() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority.loadOrCreate(dir, FIXED);
        Path cert = dir.resolve("ca.pem");
        String good = Files.readString(cert);

        Files.writeString(cert, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        CaException badCert = assertThrows(CaException.class, () -> CertificateAuthority.load(dir));
        assertTrue(badCert.getMessage().contains("corrupt CA certificate " + cert), badCert.getMessage());

        Files.writeString(cert, "not pem at all");
        CaException noCert = assertThrows(CaException.class, () -> CertificateAuthority.load(dir));
        assertTrue(noCert.getMessage().contains(cert.toString()), noCert.getMessage());

        Files.writeString(cert, good);
        Path key = dir.resolve("ca-key.pem");
        Files.writeString(key, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
        CaException badKey = assertThrows(CaException.class, () -> CertificateAuthority.load(dir));
        assertTrue(badKey.getMessage().contains("corrupt CA key " + key), badKey.getMessage());
    }

    @Test
    void aKeyOfAnotherCaIsRefused() throws Exception {
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        CertificateAuthority.loadOrCreate(a, FIXED);
        CertificateAuthority.loadOrCreate(b, FIXED);
        // Both pairs were checked when created, and noted as such: the note must not vouch for a new pair.
        assertTrue(Files.exists(a.resolve(CertificateAuthority.PAIR_CHECKED_FILE)));
        Files.writeString(a.resolve("ca-key.pem"), Files.readString(b.resolve("ca-key.pem")));
        CaException e = assertThrows(CaException.class, () -> CertificateAuthority.load(a));
        assertTrue(
                e.getMessage().contains(a.resolve("ca-key.pem") + " does not belong to the certificate"),
                e.getMessage());
        // Not even with the other CA's note beside its key.
        Files.copy(
                b.resolve(CertificateAuthority.PAIR_CHECKED_FILE),
                a.resolve(CertificateAuthority.PAIR_CHECKED_FILE),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThrows(CaException.class, () -> CertificateAuthority.load(a));
    }

    @Test
    void aCheckedPairIsNotedWithoutSecretsAndLoadsAgain() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority created = CertificateAuthority.loadOrCreate(dir, FIXED);
        Path note = dir.resolve(CertificateAuthority.PAIR_CHECKED_FILE);
        String digest = Files.readString(note);
        assertTrue(digest.matches("[0-9a-f]{64}"), digest);
        assertEquals("rw-------", mode(note));
        assertEquals(created.sha256Fingerprint(), CertificateAuthority.load(dir).sha256Fingerprint());
        // A stale note (another pair's digest) means the pair is checked again, and noted again.
        Files.writeString(note, "0".repeat(64));
        assertEquals(created.sha256Fingerprint(), CertificateAuthority.load(dir).sha256Fingerprint());
        assertEquals(digest, Files.readString(note));
    }

    @Test
    void rotateReplacesKeyAndCertificateAndKeepsTheOldCertificate() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority old = CertificateAuthority.loadOrCreate(dir, FIXED);
        Clock later = Clock.fixed(T0.plus(Duration.ofDays(30)), ZoneOffset.UTC);

        CertificateAuthority rotated = CertificateAuthority.rotate(dir, later);

        assertNotEquals(old.sha256Fingerprint(), rotated.sha256Fingerprint());
        assertNotEquals(old.certificate().getPublicKey(), rotated.certificate().getPublicKey());
        assertEquals(rotated.sha256Fingerprint(), CertificateAuthority.load(dir).sha256Fingerprint());
        Path kept = dir.resolve("ca.pem.20250331T120000Z.old");
        assertEquals(old.certificatePem(), Files.readString(kept));
        assertEquals("rw-------", mode(dir.resolve("ca-key.pem")));
        assertEquals(T0.plus(Duration.ofDays(30)).minus(Duration.ofHours(1)), rotated.notBefore());

        // A second rotation within the same second keeps both old certificates.
        CertificateAuthority.rotate(dir, later);
        assertTrue(Files.exists(dir.resolve("ca.pem.20250331T120000Z-1.old")));
    }

    @Test
    void rotateCreatesACaWhereThereIsNone() throws Exception {
        Path dir = tmp.resolve("ca");
        CertificateAuthority ca = CertificateAuthority.rotate(dir, FIXED);
        assertEquals(ca.sha256Fingerprint(), CertificateAuthority.load(dir).sha256Fingerprint());
    }

    @Test
    void concurrentCreatorsInThreadsAndProcessesAgreeOnOneCa() throws Exception {
        Path dir = tmp.resolve("ca");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            processes.add(new ProcessBuilder(
                            java,
                            "-cp",
                            System.getProperty("java.class.path"),
                            CreateCaMain.class.getName(),
                            dir.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<String>> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Callable<String> create = () -> {
                start.await();
                return CertificateAuthority.loadOrCreate(dir, Clock.systemUTC()).sha256Fingerprint();
            };
            threads.add(pool.submit(create));
        }
        start.countDown();
        Set<String> fingerprints = new java.util.HashSet<>();
        for (Future<String> f : threads) {
            fingerprints.add(f.get(60, TimeUnit.SECONDS));
        }
        pool.shutdown();
        for (Process p : processes) {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
            fingerprints.add(new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip());
        }
        assertEquals(1, fingerprints.size(), fingerprints.toString());
        assertEquals(
                fingerprints.iterator().next(), CertificateAuthority.load(dir).sha256Fingerprint());
    }

    @Test
    void defaultDirectoryFollowsXdg() {
        assertEquals(
                Path.of("/data/agentjail/ca"),
                CertificateAuthority.defaultDirectory(Map.of("XDG_DATA_HOME", "/data", "HOME", "/home/u")));
        assertEquals(
                Path.of("/home/u/.local/share/agentjail/ca"),
                CertificateAuthority.defaultDirectory(Map.of("HOME", "/home/u")));
        assertEquals(
                Path.of("/home/u/.local/share/agentjail/ca"),
                CertificateAuthority.defaultDirectory(Map.of("XDG_DATA_HOME", "", "HOME", "/home/u")));
        assertEquals(
                Path.of("/home/u/.local/share/agentjail/ca"),
                CertificateAuthority.defaultDirectory(Map.of("XDG_DATA_HOME", "relative", "HOME", "/home/u")));
    }

    @Test
    void longUserAndHostNamesAreCutToFitTheCommonName() {
        assertEquals("agentjail local CA (me@box)", CertificateAuthority.commonName("me@box"));
        String cn = CertificateAuthority.commonName("someone@" + "h".repeat(80));
        assertEquals(64, cn.length());
        assertTrue(cn.startsWith("agentjail local CA (someone@hhh") && cn.endsWith(")"), cn);
    }

    @Test
    void pemRoundTrips() throws Exception {
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(tmp.resolve("ca"), FIXED);
        List<byte[]> ders = Pem.decodeAll("junk\n" + ca.certificatePem() + "more junk", Pem.CERTIFICATE);
        assertEquals(1, ders.size());
        assertArrayEquals(ca.certificate().getEncoded(), ders.get(0));
    }

    static String mode(Path path) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }

    private static int countTrue(boolean[] bits) {
        int n = 0;
        for (boolean b : bits) {
            n += b ? 1 : 0;
        }
        return n;
    }
}
