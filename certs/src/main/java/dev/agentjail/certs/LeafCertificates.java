package dev.agentjail.certs;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Mints and caches one short-lived server certificate per host, signed by the local CA, off the
 * caller's thread (the proxy asks from its Netty event loops).
 *
 * <p>All leaves of one instance share one EC P-256 key pair, generated when the instance is built:
 * minting is then one signature, not a key generation plus a signature. The key never leaves this
 * process and lives no longer than it; a leaf is only ever presented to the jail's clients, which
 * trust the CA anyway, so a per-host key would add cost without protecting anything more.
 *
 * <p>Each entry expires at half the remaining lifetime of its certificate, measured on the injected
 * clock, so a cached certificate is never near its notAfter; concurrent requests for one host share
 * one minting, and a failed minting is not cached.
 */
public final class LeafCertificates {
    public static final Duration DEFAULT_VALIDITY = Duration.ofHours(24);
    public static final long DEFAULT_MAX_ENTRIES = 10_000;
    /** notBefore is this far in the past (never before the CA's notBefore), for clients whose clock is behind. */
    public static final Duration BACKDATE = Duration.ofHours(1);
    /** The name {@link #warmUp} mints for: reserved (RFC 6761), so it is never a real host. */
    public static final String WARM_UP_HOST = "warm-up.invalid";

    private final CertificateAuthority ca;
    private final Clock clock;
    private final Duration validity;
    private final SecureRandom random = new SecureRandom();
    private final X509Certificate caCertificate;
    /** Built on the first minting (on the executor): a session that never intercepts never pays for it. */
    private Signer signer;

    private final AsyncLoadingCache<String, LeafCertificate> cache;
    private final Executor executor;
    private final AtomicLong mintings = new AtomicLong();

    public LeafCertificates(CertificateAuthority ca, Clock clock, Executor executor) {
        this(ca, clock, executor, DEFAULT_VALIDITY, DEFAULT_MAX_ENTRIES);
    }

    public LeafCertificates(
            CertificateAuthority ca, Clock clock, Executor executor, Duration validity, long maxEntries) {
        this.ca = Objects.requireNonNull(ca, "ca");
        this.clock = Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(executor, "executor");
        if (validity.isNegative() || validity.isZero() || validity.compareTo(Duration.ofDays(397)) > 0) {
            throw new IllegalArgumentException("leaf validity must be positive and at most 397 days: " + validity);
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
        this.validity = validity;
        this.executor = executor;
        this.caCertificate = ca.certificate();
        this.cache = Caffeine.newBuilder()
                .maximumSize(maxEntries)
                .executor(executor)
                .ticker(ticker(clock))
                .expireAfter(new HalfLife())
                .buildAsync(this::mint);
    }

    /**
     * The certificate for {@code host}: a canonical lower-case DNS name, or an IPv4 or IPv6 literal
     * without brackets. Completes on the executor, or at once when cached.
     *
     * @throws IllegalArgumentException when the host is empty, not canonical or a wildcard
     */
    public CompletableFuture<LeafCertificate> forHost(String host) {
        HostLiterals.classify(host);
        CompletableFuture<LeafCertificate> leaf = cache.get(host);
        if (leaf.isCompletedExceptionally()) {
            // Caffeine drops a failed future just after it completes; a caller that comes in between
            // must not get the stale failure, so retire it here and mint again.
            cache.asMap().remove(host, leaf);
            leaf = cache.get(host);
        }
        return leaf;
    }

    /**
     * Mints one certificate for {@link #WARM_UP_HOST} on the executor, outside the cache: a fresh process spends a
     * second or more loading and initialising the signing code and making the leaf key, which the first intercepted
     * host would otherwise wait for. Completes with that certificate, which nothing else uses.
     */
    public CompletableFuture<LeafCertificate> warmUp() {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return mint(WARM_UP_HOST);
                    } catch (CaException e) {
                        throw new CompletionException(e);
                    }
                },
                executor);
    }

    public CertificateAuthority authority() {
        return ca;
    }

    /** How many certificates were minted (tests check single-flight with it). */
    long mintCount() {
        return mintings.get();
    }

    /** Runs pending evictions now (tests). */
    void cleanUp() {
        cache.synchronous().cleanUp();
    }

    long estimatedSize() {
        return cache.synchronous().estimatedSize();
    }

    private LeafCertificate mint(String host) throws CaException {
        mintings.incrementAndGet();
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        Instant caNotBefore = ca.notBefore();
        Instant caNotAfter = ca.notAfter();
        if (now.isBefore(caNotBefore)) {
            throw new CaException("the CA " + ca.certificateFile() + " is not valid before " + caNotBefore
                    + "; is the system clock right?");
        }
        if (!now.isBefore(caNotAfter)) {
            throw new CaException("the CA " + ca.certificateFile() + " expired at " + caNotAfter
                    + " (replace it with: agentjail ca rotate)");
        }
        Instant notBefore = max(now.minus(BACKDATE), caNotBefore);
        Instant notAfter = min(now.plus(validity), caNotAfter);
        GeneralName san = switch (HostLiterals.classify(host)) {
            case DNS -> new GeneralName(GeneralName.dNSName, host);
            case IPV4 -> new GeneralName(GeneralName.iPAddress, new DEROctetString(HostLiterals.ipv4Bytes(host)));
            case IPV6 -> new GeneralName(GeneralName.iPAddress, new DEROctetString(HostLiterals.ipv6Bytes(host)));
        };
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                .addRDN(BCStyle.CN, commonName(host))
                .build();
        Signer signer = signer();
        try {
            X509v3CertificateBuilder builder = new X509v3CertificateBuilder(
                            signer.issuer,
                            CertificateAuthority.randomSerial(random),
                            Date.from(notBefore),
                            Date.from(notAfter),
                            subject,
                            signer.leafPublicKey)
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(
                            Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
                    .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(san))
                    .addExtension(Extension.subjectKeyIdentifier, false, signer.leafKeyId)
                    .addExtension(Extension.authorityKeyIdentifier, false, signer.authorityKeyId);
            byte[] der = builder.build(new JcaContentSignerBuilder(CertificateAuthority.SIGNATURE)
                            .setProvider(signer.bc)
                            .setSecureRandom(random)
                            .build(signer.signingKey))
                    .getEncoded();
            X509Certificate leaf = CertificateAuthority.parseCertificate(der);
            return new LeafCertificate(
                    signer.leafKeys.getPrivate(),
                    new X509Certificate[] {leaf, caCertificate},
                    leaf.getNotAfter().toInstant());
        } catch (IOException | OperatorCreationException | CertificateException e) {
            throw new CaException("cannot mint a certificate for " + host + ": " + e.getMessage(), e);
        }
    }

    /** CN is informational (clients match the SAN); X.520 caps it at 64 characters. */
    static String commonName(String host) {
        return host.length() <= CertificateAuthority.MAX_CN ? host : host.substring(0, CertificateAuthority.MAX_CN);
    }

    private static byte[] caKeyId(X509Certificate caCertificate, JcaX509ExtensionUtils utils) {
        byte[] extension = caCertificate.getExtensionValue(Extension.subjectKeyIdentifier.getId());
        if (extension != null) {
            return SubjectKeyIdentifier.getInstance(
                            ASN1OctetString.getInstance(extension).getOctets())
                    .getKeyIdentifier();
        }
        return utils.createSubjectKeyIdentifier(caCertificate.getPublicKey()).getKeyIdentifier();
    }

    /** Caffeine's time source from the injected clock, so tests move expiry by moving the clock. */
    private static Ticker ticker(Clock clock) {
        return () -> epochNanos(clock.instant());
    }

    private static long epochNanos(Instant instant) {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
    }

    private static Instant max(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    /** An entry lives half of what is left of its certificate's validity when it is cached. */
    private static final class HalfLife implements Expiry<String, LeafCertificate> {
        @Override
        public long expireAfterCreate(String host, LeafCertificate leaf, long currentTime) {
            long left = epochNanos(leaf.notAfter()) - currentTime;
            return Math.max(0, left / 2);
        }

        @Override
        public long expireAfterUpdate(String host, LeafCertificate leaf, long currentTime, long currentDuration) {
            return expireAfterCreate(host, leaf, currentTime);
        }

        @Override
        public long expireAfterRead(String host, LeafCertificate leaf, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }

    private synchronized Signer signer() throws CaException {
        if (signer == null) {
            signer = new Signer(ca, caCertificate);
        }
        return signer;
    }

    /** The BouncyCastle side of minting: the provider, the leaves' shared key pair and the CA key, converted once. */
    private static final class Signer {
        final BouncyCastleProvider bc = new BouncyCastleProvider();
        final KeyPair leafKeys = CertificateAuthority.newKeyPair();
        final SubjectPublicKeyInfo leafPublicKey;
        final SubjectKeyIdentifier leafKeyId;
        final AuthorityKeyIdentifier authorityKeyId;
        final X500Name issuer;
        /**
         * The CA key as BouncyCastle's own key object, converted once: signing with the JDK's key object
         * makes BouncyCastle rebuild the curve for every signature and lose its precomputed tables.
         */
        final PrivateKey signingKey;

        Signer(CertificateAuthority ca, X509Certificate caCertificate) throws CaException {
            this.issuer =
                    X500Name.getInstance(caCertificate.getSubjectX500Principal().getEncoded());
            try {
                this.signingKey = KeyFactory.getInstance("EC", bc)
                        .generatePrivate(new PKCS8EncodedKeySpec(ca.privateKey().getEncoded()));
            } catch (GeneralSecurityException e) {
                throw new CaException("cannot convert the CA key: " + e.getMessage(), e);
            }
            this.leafPublicKey =
                    SubjectPublicKeyInfo.getInstance(leafKeys.getPublic().getEncoded());
            try {
                JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
                this.leafKeyId = utils.createSubjectKeyIdentifier(leafKeys.getPublic());
                this.authorityKeyId = new AuthorityKeyIdentifier(caKeyId(caCertificate, utils));
            } catch (Exception e) {
                throw new CaException("cannot compute key identifiers: " + e.getMessage(), e);
            }
        }
    }
}
