package dev.agentjail.certs;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigInteger;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The user's local certificate authority: an EC P-256 key and a self-signed CA certificate kept in
 * one directory ({@code ca.pem} 0644, {@code ca-key.pem} 0600), created on first use.
 *
 * <p>P-256 rather than P-384: it is the curve every TLS stack supports and verifies fastest, it is
 * the curve of the leaves (so one curve family per handshake), and 128-bit security matches the
 * leaves and SHA-256 signatures; a 384-bit CA would cost every client a slower verification without
 * making the chain stronger than its weakest link.
 */
public final class CertificateAuthority {
    public static final String CERTIFICATE_FILE = "ca.pem";
    public static final String KEY_FILE = "ca-key.pem";
    static final String LOCK_FILE = ".lock";
    static final String PAIR_CHECKED_FILE = ".pair-checked";
    static final String PRIVATE_KEY_PEM = "PRIVATE KEY";
    static final String CURVE = "secp256r1";
    static final String SIGNATURE = "SHA256withECDSA";
    /** Back-dating of notBefore, so a client whose clock is a little behind still accepts the CA. */
    static final Duration BACKDATE = Duration.ofHours(1);
    /** X.520 upper bound of a common name. */
    static final int MAX_CN = 64;

    private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(30);
    private static final DateTimeFormatter OLD_SUFFIX =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

    private final Path directory;
    private final X509Certificate certificate;
    private final PrivateKey privateKey;
    private final String certificatePem;
    private final String fingerprint;

    private CertificateAuthority(Path directory, X509Certificate certificate, PrivateKey privateKey) {
        this.directory = directory;
        this.certificate = certificate;
        this.privateKey = privateKey;
        this.certificatePem = Pem.encode(certificate);
        this.fingerprint = sha256Fingerprint(certificate);
    }

    /** {@code $XDG_DATA_HOME/agentjail/ca}, else {@code $HOME/.local/share/agentjail/ca}. */
    public static Path defaultDirectory(Map<String, String> env) {
        String xdg = env.get("XDG_DATA_HOME");
        // The XDG spec says to ignore a relative value.
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "agentjail", "ca");
        }
        String home = env.get("HOME");
        if (home == null || home.isBlank()) {
            home = System.getProperty("user.home");
        }
        return Path.of(home, ".local", "share", "agentjail", "ca");
    }

    /** Whether {@code dir} holds a CA certificate (it may still be incomplete or unusable). */
    public static boolean exists(Path dir) {
        return Files.exists(dir.resolve(CERTIFICATE_FILE)) || Files.exists(dir.resolve(KEY_FILE));
    }

    /** Loads the CA in {@code dir}, creating the directory and a new CA first if there is none. */
    public static CertificateAuthority loadOrCreate(Path dir, Clock clock) throws CaException {
        createDirectory(dir);
        return underLock(dir, () -> {
            boolean hasCert = Files.exists(dir.resolve(CERTIFICATE_FILE));
            boolean hasKey = Files.exists(dir.resolve(KEY_FILE));
            return !hasCert && !hasKey ? create(dir, clock) : read(dir);
        });
    }

    /** Loads the CA in {@code dir}; fails when there is none. */
    public static CertificateAuthority load(Path dir) throws CaException {
        if (!Files.isDirectory(dir)) {
            throw new CaException("no agentjail CA in " + dir + " (create one with: agentjail ca init)");
        }
        if (!Files.isWritable(dir)) {
            // Nobody can be creating one concurrently in a directory we cannot write: read without the lock.
            return read(dir);
        }
        return underLock(dir, () -> read(dir));
    }

    /**
     * Replaces the CA in {@code dir} with a new key and certificate. The old certificate is kept as
     * {@code ca.pem.<UTC timestamp>.old}, so it can still be found and removed from wherever it was
     * trusted; the old key is deleted, since nothing may sign with a retired CA.
     */
    public static CertificateAuthority rotate(Path dir, Clock clock) throws CaException {
        createDirectory(dir);
        return underLock(dir, () -> {
            Path cert = dir.resolve(CERTIFICATE_FILE);
            if (Files.exists(cert)) {
                String stamp = OLD_SUFFIX.format(clock.instant());
                Path old = dir.resolve(CERTIFICATE_FILE + "." + stamp + ".old");
                for (int i = 1; Files.exists(old); i++) {
                    old = dir.resolve(CERTIFICATE_FILE + "." + stamp + "-" + i + ".old");
                }
                Files.move(cert, old);
            }
            Files.deleteIfExists(dir.resolve(KEY_FILE));
            return create(dir, clock);
        });
    }

    /** The CA certificate, as the JDK parses it. */
    public X509Certificate certificate() {
        return certificate;
    }

    /** The CA certificate as PEM text, ending in a newline. */
    public String certificatePem() {
        return certificatePem;
    }

    /** SHA-256 of the certificate's DER, upper-case hex separated by colons (as openssl prints it). */
    public String sha256Fingerprint() {
        return fingerprint;
    }

    public Instant notBefore() {
        return certificate.getNotBefore().toInstant();
    }

    public Instant notAfter() {
        return certificate.getNotAfter().toInstant();
    }

    public Path directory() {
        return directory;
    }

    public Path certificateFile() {
        return directory.resolve(CERTIFICATE_FILE);
    }

    public Path keyFile() {
        return directory.resolve(KEY_FILE);
    }

    /** Package-private: only {@link LeafCertificates} signs with the CA. */
    PrivateKey privateKey() {
        return privateKey;
    }

    static String sha256Fingerprint(X509Certificate certificate) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded());
            return HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    private static void createDirectory(Path dir) throws CaException {
        try {
            Path parent = dir.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(SecureFiles.PRIVATE_DIR));
                Files.setPosixFilePermissions(dir, SecureFiles.PRIVATE_DIR);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(dir)) {
                    throw new CaException(dir + " exists and is not a directory");
                }
            }
            if (Files.getFileAttributeView(dir, PosixFileAttributeView.class) == null) {
                throw new CaException(dir + " is not on a POSIX file system; the CA key needs owner-only permissions");
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new CaException("cannot create the CA directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Work done while holding the CA directory's lock. */
    private interface Locked {
        CertificateAuthority run() throws CaException, IOException;
    }

    /**
     * Runs {@code action} holding an exclusive lock on {@code dir/.lock}: across processes through
     * the OS lock, and across threads of this JVM by retrying, since the JVM refuses a second lock on
     * one file.
     */
    private static CertificateAuthority underLock(Path dir, Locked action) throws CaException {
        Path lockFile = dir.resolve(LOCK_FILE);
        try (FileChannel channel = FileChannel.open(
                lockFile,
                Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(SecureFiles.OWNER_ONLY))) {
            FileLock lock = acquire(channel, lockFile);
            try {
                return action.run();
            } finally {
                lock.release();
            }
        } catch (IOException e) {
            throw new CaException("cannot use the CA in " + dir + ": " + e.getMessage(), e);
        }
    }

    private static FileLock acquire(FileChannel channel, Path lockFile) throws IOException, CaException {
        long deadline = System.nanoTime() + LOCK_TIMEOUT.toNanos();
        while (true) {
            try {
                FileLock lock = channel.tryLock();
                if (lock != null) {
                    return lock;
                }
            } catch (OverlappingFileLockException e) {
                // another thread of this JVM holds it
            }
            if (System.nanoTime() > deadline) {
                throw new CaException(
                        "timed out waiting for the lock " + lockFile + " (is another agentjail creating the CA?)");
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CaException("interrupted while waiting for " + lockFile, e);
            }
        }
    }

    private static CertificateAuthority create(Path dir, Clock clock) throws CaException {
        KeyPair pair = newKeyPair();
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                .addRDN(BCStyle.O, "agentjail")
                .addRDN(BCStyle.CN, commonName(UserAndHost.current()))
                .build();
        BouncyCastleProvider bc = new BouncyCastleProvider();
        X509Certificate certificate;
        try {
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder builder = new X509v3CertificateBuilder(
                            subject,
                            randomSerial(new SecureRandom()),
                            Date.from(now.minus(BACKDATE)),
                            Date.from(now.atOffset(ZoneOffset.UTC).plusYears(10).toInstant()),
                            subject,
                            SubjectPublicKeyInfo.getInstance(pair.getPublic().getEncoded()))
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(
                            Extension.subjectKeyIdentifier,
                            false,
                            extensions.createSubjectKeyIdentifier(pair.getPublic()));
            X509CertificateHolder holder = builder.build(
                    new JcaContentSignerBuilder(SIGNATURE).setProvider(bc).build(pair.getPrivate()));
            certificate = parseCertificate(holder.getEncoded());
        } catch (IOException | OperatorCreationException | NoSuchAlgorithmException | CertificateException e) {
            throw new CaException("cannot create the CA certificate: " + e.getMessage(), e);
        }
        Path keyFile = dir.resolve(KEY_FILE);
        Path certFile = dir.resolve(CERTIFICATE_FILE);
        try {
            // The key first: a crash in between leaves a key without a certificate, which load reports.
            SecureFiles.writeAtomically(
                    keyFile,
                    Pem.encode(PRIVATE_KEY_PEM, pair.getPrivate().getEncoded()).getBytes(StandardCharsets.US_ASCII),
                    SecureFiles.OWNER_ONLY);
            SecureFiles.writeAtomically(
                    certFile, Pem.encode(certificate).getBytes(StandardCharsets.US_ASCII), SecureFiles.WORLD_READABLE);
        } catch (IOException e) {
            throw new CaException("cannot write the CA to " + dir + ": " + e.getMessage(), e);
        }
        notePairChecked(dir, certificate, pair.getPrivate());
        return new CertificateAuthority(dir, certificate, pair.getPrivate());
    }

    private static CertificateAuthority read(Path dir) throws CaException {
        Path certFile = dir.resolve(CERTIFICATE_FILE);
        Path keyFile = dir.resolve(KEY_FILE);
        boolean hasCert = Files.exists(certFile);
        boolean hasKey = Files.exists(keyFile);
        if (!hasCert && !hasKey) {
            throw new CaException("no agentjail CA in " + dir + " (create one with: agentjail ca init)");
        }
        if (!hasCert || !hasKey) {
            throw new CaException("incomplete CA in " + dir + ": " + (hasCert ? keyFile : certFile)
                    + " is missing (replace the CA with: agentjail ca rotate)");
        }
        checkKeyPermissions(keyFile);
        X509Certificate certificate = readCertificate(certFile);
        PrivateKey key = readKey(keyFile);
        checkPairOnce(dir, certFile, keyFile, certificate, key);
        return new CertificateAuthority(dir, certificate, key);
    }

    /**
     * Checks that the key belongs to the certificate, once per pair: a signature and its verification cost a
     * cold JVM tens of milliseconds of every session's start, so a pair that passed is noted in the CA directory
     * (its digest, nothing secret) and a pair with that digest is not signed again. Replacing either file
     * changes the digest, so a new pair is always checked.
     */
    private static void checkPairOnce(
            Path dir, Path certFile, Path keyFile, X509Certificate certificate, PrivateKey key) throws CaException {
        Path marker = dir.resolve(PAIR_CHECKED_FILE);
        String digest = pairDigest(certificate, key);
        try {
            if (Files.isRegularFile(marker, LinkOption.NOFOLLOW_LINKS)
                    && digest.equals(Files.readString(marker, StandardCharsets.US_ASCII))) {
                return;
            }
        } catch (IOException e) {
            // Unreadable: check the pair the long way.
        }
        checkPair(certFile, keyFile, certificate, key);
        notePairChecked(dir, certificate, key);
    }

    private static void notePairChecked(Path dir, X509Certificate certificate, PrivateKey key) {
        try {
            SecureFiles.writeAtomically(
                    dir.resolve(PAIR_CHECKED_FILE),
                    pairDigest(certificate, key).getBytes(StandardCharsets.US_ASCII),
                    SecureFiles.OWNER_ONLY);
        } catch (IOException | CaException e) {
            // Only saves the next start a signature.
        }
    }

    private static String pairDigest(X509Certificate certificate, PrivateKey key) throws CaException {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            sha256.update(certificate.getEncoded());
            sha256.update(key.getEncoded());
            return HexFormat.of().formatHex(sha256.digest());
        } catch (GeneralSecurityException e) {
            throw new CaException("cannot digest the CA: " + e.getMessage(), e);
        }
    }

    private static void checkKeyPermissions(Path keyFile) throws CaException {
        Set<PosixFilePermission> permissions;
        try {
            permissions = Files.getPosixFilePermissions(keyFile);
        } catch (IOException | UnsupportedOperationException e) {
            throw new CaException("cannot read the permissions of " + keyFile + ": " + e.getMessage(), e);
        }
        Set<PosixFilePermission> others = Set.of(
                PosixFilePermission.GROUP_READ,
                PosixFilePermission.GROUP_WRITE,
                PosixFilePermission.GROUP_EXECUTE,
                PosixFilePermission.OTHERS_READ,
                PosixFilePermission.OTHERS_WRITE,
                PosixFilePermission.OTHERS_EXECUTE);
        for (PosixFilePermission p : permissions) {
            if (others.contains(p)) {
                throw new CaException("refusing to use the CA key " + keyFile + ": its mode is "
                        + SecureFiles.mode(permissions) + ", so other users may read it; fix it with: chmod 600 "
                        + keyFile + " (and consider rotating the CA: agentjail ca rotate)");
            }
        }
    }

    private static X509Certificate readCertificate(Path certFile) throws CaException {
        String text = readText(certFile);
        var ders = Pem.decodeAll(text, Pem.CERTIFICATE);
        if (ders.size() != 1) {
            throw new CaException(certFile + " must hold exactly one PEM certificate, found " + ders.size()
                    + " (replace the CA with: agentjail ca rotate)");
        }
        X509Certificate certificate;
        try {
            certificate = parseCertificate(ders.get(0));
        } catch (CertificateException e) {
            throw new CaException(
                    "corrupt CA certificate " + certFile + ": " + e.getMessage()
                            + " (replace the CA with: agentjail ca rotate)",
                    e);
        }
        if (certificate.getBasicConstraints() < 0) {
            throw new CaException(certFile + " is not a CA certificate (no basicConstraints CA:true)");
        }
        return certificate;
    }

    private static PrivateKey readKey(Path keyFile) throws CaException {
        String text = readText(keyFile);
        List<byte[]> pkcs8 = Pem.decodeAll(text, PRIVATE_KEY_PEM);
        if (pkcs8.size() == 1) {
            // The form this class writes: the JDK reads it without loading BouncyCastle (a good part of start-up).
            try {
                return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(pkcs8.get(0)));
            } catch (GeneralSecurityException | RuntimeException e) {
                throw new CaException(
                        "corrupt CA key " + keyFile + ": " + e.getMessage()
                                + " (replace the CA with: agentjail ca rotate)",
                        e);
            }
        }
        try (PEMParser parser = new PEMParser(new StringReader(text))) {
            Object object = parser.readObject();
            PrivateKeyInfo info;
            if (object instanceof PrivateKeyInfo pki) {
                info = pki;
            } else if (object instanceof PEMKeyPair pair) {
                info = pair.getPrivateKeyInfo();
            } else {
                throw new CaException("corrupt CA key " + keyFile + ": no unencrypted PEM private key found"
                        + " (replace the CA with: agentjail ca rotate)");
            }
            return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(info.getEncoded()));
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            throw new CaException(
                    "corrupt CA key " + keyFile + ": " + e.getMessage() + " (replace the CA with: agentjail ca rotate)",
                    e);
        }
    }

    private static void checkPair(Path certFile, Path keyFile, X509Certificate certificate, PrivateKey key)
            throws CaException {
        byte[] probe = "agentjail CA key check".getBytes(StandardCharsets.US_ASCII);
        boolean matches;
        try {
            Signature signer = Signature.getInstance(SIGNATURE);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(SIGNATURE);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            matches = verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            matches = false;
        }
        if (!matches) {
            throw new CaException("the CA key " + keyFile + " does not belong to the certificate " + certFile
                    + " (replace the CA with: agentjail ca rotate)");
        }
    }

    private static String readText(Path file) throws CaException {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            throw new CaException(file + " is missing (create the CA with: agentjail ca init)", e);
        } catch (IOException e) {
            throw new CaException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    static X509Certificate parseCertificate(byte[] der) throws CertificateException {
        return (X509Certificate)
                CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
    }

    static KeyPair newKeyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec(CURVE));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK always has EC P-256", e);
        }
    }

    /** A random positive serial of 128 bits (CA/B Forum asks for at least 64 random bits). */
    static BigInteger randomSerial(SecureRandom random) {
        byte[] bytes = new byte[16];
        BigInteger serial;
        do {
            random.nextBytes(bytes);
            serial = new BigInteger(1, bytes);
        } while (serial.signum() == 0);
        return serial;
    }

    static String commonName(String userAtHost) {
        String cn = "agentjail local CA (" + userAtHost + ")";
        if (cn.length() <= MAX_CN) {
            return cn;
        }
        int room = MAX_CN - "agentjail local CA ()".length();
        return "agentjail local CA (" + userAtHost.substring(0, room) + ")";
    }
}
