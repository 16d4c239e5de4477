package dev.agentjail.certs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LeafCertificatesTest {
    static final Instant T0 = Instant.parse("2025-03-01T12:00:00Z");

    @TempDir
    Path tmp;

    MutableClock clock;
    CertificateAuthority ca;
    ExecutorService pool;

    @BeforeEach
    void setUp() throws Exception {
        clock = new MutableClock(T0);
        ca = CertificateAuthority.loadOrCreate(tmp.resolve("ca"), clock);
        pool = Executors.newFixedThreadPool(4);
    }

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    LeafCertificates leaves() {
        return new LeafCertificates(ca, clock, pool);
    }

    /**
     * Minting on the caller's thread. Caffeine sizes and dates an async entry in a callback of its
     * future, which a pool thread may still be running when get() returns; tests that count entries
     * or move the clock right after a get need every callback to have run by then.
     */
    LeafCertificates sameThreadLeaves(long maxEntries) {
        return new LeafCertificates(ca, clock, Runnable::run, Duration.ofHours(24), maxEntries);
    }

    static LeafCertificate get(CompletableFuture<LeafCertificate> future) throws Exception {
        return future.get(30, TimeUnit.SECONDS);
    }

    @Test
    void aDnsLeafHasExactlyThatNameAndTheServerProfile() throws Exception {
        clock.advance(Duration.ofHours(2));
        LeafCertificate leaf = get(leaves().forHost("api.example.test"));
        X509Certificate cert = reparse(leaf.certificate());

        cert.verify(ca.certificate().getPublicKey());
        assertEquals(List.of(List.of(2, "api.example.test")), sans(cert));
        assertEquals("CN=api.example.test", cert.getSubjectX500Principal().getName());
        assertEquals(ca.certificate().getSubjectX500Principal(), cert.getIssuerX500Principal());
        assertEquals(List.of("1.3.6.1.5.5.7.3.1"), cert.getExtendedKeyUsage());
        boolean[] usage = cert.getKeyUsage();
        assertTrue(usage[0], "digitalSignature");
        for (int i = 1; i < usage.length; i++) {
            assertFalse(usage[i], "only digitalSignature, bit " + i);
        }
        assertEquals(-1, cert.getBasicConstraints(), "not a CA");
        assertEquals("SHA256withECDSA", cert.getSigAlgName());
        assertEquals(
                256,
                ((ECPublicKey) cert.getPublicKey())
                        .getParams()
                        .getCurve()
                        .getField()
                        .getFieldSize());
        assertTrue(cert.getSerialNumber().signum() > 0 && cert.getSerialNumber().bitLength() <= 128);
        assertEquals(T0.plus(Duration.ofHours(1)), cert.getNotBefore().toInstant(), "back-dated one hour");
        assertEquals(T0.plus(Duration.ofHours(26)), cert.getNotAfter().toInstant(), "24 hours from now");
        assertEquals(cert.getNotAfter().toInstant(), leaf.notAfter());
        assertArrayEquals(authorityKeyId(cert), subjectKeyId(ca.certificate()));
        assertEquals(2, leaf.chain().length);
        assertSame(ca.certificate(), leaf.chain()[1]);
        assertEquals("EC", leaf.key().getAlgorithm());
    }

    @Test
    void ipLiteralsGetAnIpSanOnly() throws Exception {
        LeafCertificates leaves = leaves();
        X509Certificate v4 = get(leaves.forHost("192.0.2.7")).certificate();
        assertEquals(List.of(List.of(7, "192.0.2.7")), sans(v4));

        X509Certificate v6 = get(leaves.forHost("2001:db8::1")).certificate();
        List<List<Object>> sans = sans(v6);
        assertEquals(1, sans.size());
        assertEquals(7, sans.get(0).get(0));
        assertEquals(InetAddress.getByName("2001:db8::1"), InetAddress.getByName((String)
                sans.get(0).get(1)));
        assertEquals("CN=2001:db8::1", v6.getSubjectX500Principal().getName());

        X509Certificate loopback6 = get(leaves.forHost("::1")).certificate();
        assertEquals(InetAddress.getByName("::1"), InetAddress.getByName((String)
                sans(loopback6).get(0).get(1)));
    }

    @Test
    void notBeforeIsNeverBeforeTheCasAndNotAfterNeverAfterIt() throws Exception {
        // The CA was made at T0 and back-dated to T0 - 1h; a leaf at T0 - 30min cannot go back a full hour.
        clock.set(T0.minus(Duration.ofMinutes(30)));
        X509Certificate early = get(leaves().forHost("early.test")).certificate();
        assertEquals(ca.notBefore(), early.getNotBefore().toInstant());

        clock.set(ca.notAfter().minus(Duration.ofHours(3)));
        X509Certificate late = get(leaves().forHost("late.test")).certificate();
        assertEquals(ca.notAfter(), late.getNotAfter().toInstant());
    }

    @Test
    void aLongHostNameKeepsItsSanAndGetsACutCommonName() throws Exception {
        String host = "a".repeat(60) + "." + "b".repeat(60) + ".test";
        X509Certificate cert = get(leaves().forHost(host)).certificate();
        assertEquals(List.of(List.of(2, host)), sans(cert));
        assertEquals(
                "CN=" + host.substring(0, 64), cert.getSubjectX500Principal().getName());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "Upper.test",
                "*.example.test",
                "a.*.test",
                "a..test",
                "trailing.dot.",
                ".leading.test",
                "-dash.test",
                "space here.test",
                "[::1]",
                "2001:DB8::1",
                "2001:db8:0:0:0:0:0:1",
                "fe80::1%eth0",
                "1.2.3",
                "01.2.3.4",
                "1.2.3.256",
                "host:443",
                "ex\u00e4mple.test"
            })
    void nonCanonicalHostsAreRejected(String host) {
        LeafCertificates leaves = leaves();
        assertThrows(IllegalArgumentException.class, () -> leaves.forHost(host));
        assertEquals(0, leaves.mintCount());
    }

    /** The pool, holding every task until {@code gate} opens. */
    private Executor gatedBy(CountDownLatch gate) {
        return task -> pool.execute(() -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            task.run();
        });
    }

    @Test
    void fiftyConcurrentCallersShareOneMintingOffTheirThread() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        Executor gated = gatedBy(gate);
        LeafCertificates leaves = new LeafCertificates(ca, clock, gated);
        ExecutorService callers = Executors.newFixedThreadPool(50);
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<CompletableFuture<LeafCertificate>>> calls = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            calls.add(CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            start.await();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        return leaves.forHost("same.test");
                    },
                    callers));
        }
        start.countDown();
        List<CompletableFuture<LeafCertificate>> futures = new ArrayList<>();
        for (var call : calls) {
            futures.add(call.get(30, TimeUnit.SECONDS));
        }
        callers.shutdown();
        // Every caller got its answer back while the minting was still held on the executor.
        for (var f : futures) {
            assertFalse(f.isDone());
        }
        gate.countDown();
        LeafCertificate first = get(futures.get(0));
        for (var f : futures) {
            assertSame(first, get(f));
        }
        assertEquals(1, leaves.mintCount());
    }

    @Test
    void theWarmUpMintsOffTheCallersThreadForAReservedNameAndCachesNothing() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        Executor gated = gatedBy(gate);
        LeafCertificates leaves = new LeafCertificates(ca, clock, gated);

        CompletableFuture<LeafCertificate> warm = leaves.warmUp();
        assertFalse(warm.isDone(), "the caller never waits for the minting");
        gate.countDown();

        assertEquals(
                List.of(List.of(2, LeafCertificates.WARM_UP_HOST)),
                sans(get(warm).certificate()));
        assertEquals(0, leaves.estimatedSize(), "nothing is cached for the warm-up name");
        LeafCertificate real = get(leaves.forHost(LeafCertificates.WARM_UP_HOST));
        assertNotSame(get(warm), real, "a real request for the name mints its own");
        assertEquals(2, leaves.mintCount());
    }

    @Test
    void differentHostsGetDifferentCertificatesAndTheSameHostIsCached() throws Exception {
        LeafCertificates leaves = leaves();
        LeafCertificate a = get(leaves.forHost("a.test"));
        LeafCertificate b = get(leaves.forHost("b.test"));
        assertNotEquals(a.certificate(), b.certificate());
        assertNotEquals(a.certificate().getSerialNumber(), b.certificate().getSerialNumber());
        assertEquals(List.of(List.of(2, "b.test")), sans(b.certificate()));
        assertSame(a, get(leaves.forHost("a.test")));
        assertEquals(2, leaves.mintCount());
    }

    @Test
    void anEntryExpiresAtHalfItsCertificatesValidity() throws Exception {
        LeafCertificates leaves = sameThreadLeaves(100);
        LeafCertificate first = get(leaves.forHost("a.test"));
        clock.advance(Duration.ofHours(11).plusMinutes(59));
        assertSame(first, get(leaves.forHost("a.test")));
        assertEquals(1, leaves.mintCount());

        clock.advance(Duration.ofMinutes(2));
        LeafCertificate second = get(leaves.forHost("a.test"));
        assertNotSame(first, second);
        assertEquals(2, leaves.mintCount());
        assertTrue(second.notAfter().isAfter(first.notAfter()));
    }

    @Test
    void theCacheStaysWithinItsBound() throws Exception {
        LeafCertificates leaves = sameThreadLeaves(3);
        for (int i = 0; i < 20; i++) {
            get(leaves.forHost("h" + i + ".test"));
        }
        leaves.cleanUp();
        assertTrue(leaves.estimatedSize() <= 3, "size " + leaves.estimatedSize());
        assertEquals(20, leaves.mintCount());
    }

    @Test
    void aFailedMintingIsNotCached() throws Exception {
        // Before the CA's notBefore (T0 - 1h) no leaf can be valid: minting fails with the reason.
        clock.set(T0.minus(Duration.ofHours(2)));
        LeafCertificates leaves = leaves();
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(leaves.forHost("a.test")));
        CaException cause = assertInstanceOf(CaException.class, e.getCause());
        assertTrue(cause.getMessage().contains("not valid before"), cause.getMessage());

        clock.set(T0);
        assertEquals(
                List.of(List.of(2, "a.test")),
                sans(get(leaves.forHost("a.test")).certificate()));
        // Two mintings, or three when a failure was so quick that forHost itself retired it and tried again.
        assertTrue(leaves.mintCount() == 2 || leaves.mintCount() == 3, "mintings: " + leaves.mintCount());
    }

    @Test
    void anExpiredCaMintsNothing() {
        clock.set(ca.notAfter().plusSeconds(1));
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(leaves().forHost("a.test")));
        assertTrue(
                e.getCause().getMessage().contains("agentjail ca rotate"),
                e.getCause().getMessage());
    }

    @Test
    void constructorArgumentsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new LeafCertificates(ca, clock, pool, Duration.ZERO, 10));
        assertThrows(
                IllegalArgumentException.class, () -> new LeafCertificates(ca, clock, pool, Duration.ofHours(1), 0));
    }

    static X509Certificate reparse(X509Certificate cert) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(cert.getEncoded()));
    }

    static List<List<Object>> sans(X509Certificate cert) throws Exception {
        Collection<List<?>> names = cert.getSubjectAlternativeNames();
        List<List<Object>> out = new ArrayList<>();
        for (List<?> name : names) {
            out.add(List.of(name.get(0), name.get(1)));
        }
        return out;
    }

    static byte[] subjectKeyId(X509Certificate cert) {
        // OCTET STRING { OCTET STRING keyId }: two 2-byte headers for a 20-byte id.
        byte[] ext = cert.getExtensionValue("2.5.29.14");
        return java.util.Arrays.copyOfRange(ext, 4, ext.length);
    }

    static byte[] authorityKeyId(X509Certificate cert) {
        // OCTET STRING { SEQUENCE { [0] keyId } }: three 2-byte headers for a 20-byte id.
        byte[] ext = cert.getExtensionValue("2.5.29.35");
        return java.util.Arrays.copyOfRange(ext, 6, ext.length);
    }
}
