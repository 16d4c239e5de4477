package dev.agentjail.cli;

import dev.agentjail.certs.CaException;
import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.certs.LeafCertificates;
import dev.agentjail.certs.TrustBundle;
import dev.agentjail.jail.TrustFiles;
import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.KnownValue;
import dev.agentjail.policy.Policy;
import dev.agentjail.proxy.audit.Sha256;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.tls.Interception;
import dev.agentjail.proxy.tls.ServerContexts;
import dev.agentjail.proxy.tls.UpstreamTls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Reads, once at startup and on the host, everything HTTPS inspection needs, for both {@code agentjail run} and
 * {@code agentjail proxy}: the local CA and the interception built on it, the exact values of the host secrets the
 * policy names, and the real values of its credentials with a fresh placeholder for each. Every failure is a {@link
 * CliException} naming the policy key and the variable or file, never a value; nothing here prints or logs a secret.
 */
final class InspectionSetup implements AutoCloseable {
    /** What every placeholder starts with, so that a user who sees one in a log knows what it is. */
    static final String PLACEHOLDER_PREFIX = "agentjail-placeholder-";

    /** Random bytes per placeholder (hex-encoded: 32 characters). */
    static final int PLACEHOLDER_RANDOM_BYTES = 16;

    /** Shorter known values would match by accident all over ordinary traffic. */
    static final int MIN_KNOWN_VALUE_LENGTH = 8;

    /** Validity of the leaf certificates the proxy mints per host. */
    static final Duration LEAF_VALIDITY = Duration.ofHours(24);

    /** Bound of the per-host certificate and TLS context caches. */
    static final long MAX_HOSTS = 10_000;

    /** File names in the session directory. */
    static final String CA_BUNDLE_FILE = "ca-bundle.pem";

    static final String TRUST_STORE_FILE = "truststore.p12";

    private static final int CERT_THREADS = 2;
    private static final int CERT_QUEUE = 4096;

    private final CertificateAuthority ca;
    private final String systemRootsPem;
    private final ExecutorService executor;
    private final Interception interception;
    private final Inspection inspection;

    private InspectionSetup(
            CertificateAuthority ca,
            String systemRootsPem,
            ExecutorService executor,
            Interception interception,
            Inspection inspection) {
        this.ca = ca;
        this.systemRootsPem = systemRootsPem;
        this.executor = executor;
        this.interception = interception;
        this.inspection = inspection;
    }

    /**
     * Reads the secrets and the upstream CAs, loads (or creates) the CA in {@code caDir} and builds the interception.
     *
     * @param hostEnv the launcher's own environment, where {@code env:} known values and credentials are read
     * @param random the source of the placeholders
     */
    static InspectionSetup open(
            Policy policy, Map<String, String> hostEnv, Path caDir, Clock clock, SecureRandom random) {
        return open(policy, hostEnv, caDir, clock, random, Optional.empty());
    }

    /** As above; with {@code stable}, each credential's placeholder is the project's stable one for it. */
    static InspectionSetup open(
            Policy policy,
            Map<String, String> hostEnv,
            Path caDir,
            Clock clock,
            SecureRandom random,
            Optional<CredentialPlaceholders> stable) {
        // Secrets and files first: a mistake there should not leave a new CA behind, nor threads running.
        Inspection inspection = inspection(policy, hostEnv, random, stable);
        String rootsPem = systemRootsPem();
        List<X509Certificate> extraCas = upstreamCas(policy);
        CertificateAuthority ca = authority(caDir, clock);
        ExecutorService executor = certificateExecutor();
        try {
            UpstreamTls upstream;
            try {
                // Built in the background: loading the native TLS library should not delay the agent's start.
                // Parsing the system's ~150 roots is part of that: nothing at start-up needs them parsed.
                upstream = UpstreamTls.trustingInBackground(
                        () -> {
                            List<X509Certificate> roots = new ArrayList<>(parseRoots(rootsPem));
                            roots.addAll(extraCas);
                            return roots;
                        },
                        executor);
            } catch (Exception e) {
                throw new CliException(
                        ExitCodes.ENVIRONMENT, "cannot set up upstream TLS verification: " + IoErrors.message(e), e);
            }
            LeafCertificates leaves = new LeafCertificates(ca, clock, executor, LEAF_VALIDITY, MAX_HOSTS);
            Interception interception = new Interception(new ServerContexts(leaves, executor, MAX_HOSTS), upstream);
            return new InspectionSetup(ca, rootsPem, executor, interception, inspection);
        } catch (RuntimeException e) {
            executor.shutdownNow();
            throw e;
        }
    }

    /** The CA the proxy signs with; its key never leaves this process or the CA directory. */
    CertificateAuthority authority() {
        return ca;
    }

    /**
     * Readies interception in the background (a throwaway certificate and TLS context) so that the first intercepted
     * connection does not wait seconds for the signing code and the TLS library to load; call it once the process has
     * started what it is for, so that it never delays that. It starts after {@code delay}: a command that is over by
     * then ({@code run -- true}) never pays for it: once this set-up is closed, its executor refuses the warm-up.
     */
    void warmUp(Duration delay) {
        Executor later = CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS, executor);
        later.execute(() -> {
            try {
                interception.server().warmUp();
            } catch (RejectedExecutionException sessionOver) {
                // The session ended while this waited: the certificates' executor is shut down, nothing to ready.
            }
        });
    }

    Interception interception() {
        return interception;
    }

    Inspection inspection() {
        return inspection;
    }

    /** Credential variable → this session's placeholder: what the jail sees instead of the real value. */
    Map<String, String> placeholders() {
        Map<String, String> placeholders = new LinkedHashMap<>();
        for (InjectedCredential credential : inspection.credentials()) {
            placeholders.put(credential.rule().env(), credential.placeholder());
        }
        return placeholders;
    }

    /**
     * Writes the PEM bundle (system roots plus the CA) and the same certificates as a PKCS#12 trust store into {@code
     * dir} (the private session directory), for the jail to trust the CA with no flags. Neither file holds a key.
     */
    TrustFiles writeTrustFiles(Path dir) throws IOException {
        return writeTrustFiles(dir, null);
    }

    /**
     * The same, reusing a trust store built for the same bundle by an earlier session from {@code cacheDir} (null:
     * none): building one means parsing every root and two key derivations, a good part of a session's start-up.
     */
    TrustFiles writeTrustFiles(Path dir, Path cacheDir) throws IOException {
        Path pem = dir.resolve(CA_BUNDLE_FILE);
        String bundle = systemRootsPem + ca.certificatePem();
        Files.writeString(pem, bundle, StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(pem, PosixFilePermissions.fromString("rw-r--r--"));
        Path store = dir.resolve(TRUST_STORE_FILE);
        Path cached = cacheDir == null
                ? null
                : cacheDir.resolve("truststore-" + Sha256.hex(bundle).substring(0, 32) + ".p12");
        if (cached != null && Files.isRegularFile(cached, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            Files.copy(cached, store, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(store, PosixFilePermissions.fromString("rw-r--r--"));
            return new TrustFiles(
                    pem.toAbsolutePath().normalize(), store.toAbsolutePath().normalize());
        }
        List<X509Certificate> certificates = TrustBundle.readPem(pem);
        try {
            KeyStore keyStore = KeyStore.getInstance(TrustFiles.TRUST_STORE_TYPE);
            keyStore.load(null, null);
            for (int i = 0; i < certificates.size(); i++) {
                keyStore.setCertificateEntry("root-" + i, certificates.get(i));
            }
            Files.deleteIfExists(store);
            Files.createFile(store, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
            try (OutputStream out = Files.newOutputStream(store, StandardOpenOption.TRUNCATE_EXISTING)) {
                keyStore.store(out, TrustFiles.TRUST_STORE_PASSWORD.toCharArray());
            }
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot write the trust store " + store + ": " + IoErrors.message(e), e);
        }
        if (cached != null) {
            try {
                Files.createDirectories(cached.getParent());
                Path temp = Files.createTempFile(cached.getParent(), "truststore", ".tmp");
                Files.copy(store, temp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                Files.move(temp, cached, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // Only a cache: the next session builds its own.
            }
        }
        return new TrustFiles(
                pem.toAbsolutePath().normalize(), store.toAbsolutePath().normalize());
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            // A certificate being minted (the warm-up) finishes first: the JVM's exit, which may write its class-data
            // archive, must not race a thread still linking classes (HotSpot crashed so, in
            // LambdaProxyClassDictionary).
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static CertificateAuthority authority(Path caDir, Clock clock) {
        try {
            return CertificateAuthority.loadOrCreate(caDir, clock);
        } catch (CaException e) {
            throw new CliException(ExitCodes.ENVIRONMENT, "cannot use the agentjail CA: " + IoErrors.message(e), e);
        }
    }

    /** What the proxy looks for and injects: the policy's redaction rules, known values and credentials. */
    static Inspection inspection(Policy policy, Map<String, String> hostEnv, SecureRandom random) {
        return inspection(policy, hostEnv, random, Optional.empty());
    }

    static Inspection inspection(
            Policy policy, Map<String, String> hostEnv, SecureRandom random, Optional<CredentialPlaceholders> stable) {
        Map<String, String> known = new LinkedHashMap<>();
        for (KnownValue value : policy.redaction().knownValues()) {
            switch (value.kind()) {
                case ENV -> known.put(value.envName(), knownFromEnv(policy, hostEnv, value.envName()));
                case FILE -> known.put(value.file().toString(), knownFromFile(policy, value.file()));
            }
        }
        List<InjectedCredential> credentials = new ArrayList<>();
        for (CredentialRule rule : policy.credentials()) {
            if (rule.optional() && !available(hostEnv, rule)) {
                continue;
            }
            String real = credentialValue(policy, hostEnv, rule);
            if (real.length() < MIN_KNOWN_VALUE_LENGTH) {
                if (rule.optional()) {
                    // A stand-in such as OPENAI_API_KEY=dummy, set for another tool: no key, so nothing to inject.
                    continue;
                }
                throw new CliException(ExitCodes.ENVIRONMENT, tooShort(policy, rule) + "; a real key is longer");
            }
            String placeholder = stable.map(p -> stablePlaceholder(p, rule.env(), real))
                    .orElseGet(() -> newPlaceholder(random, real));
            credentials.add(new InjectedCredential(rule, placeholder, real));
        }
        return new Inspection(policy.redaction(), known, credentials);
    }

    /**
     * What the session says about the optional credentials it skips although their variable is set: a value shorter
     * than {@value #MIN_KNOWN_VALUE_LENGTH} characters is no API key (a stand-in such as {@code dummy} that another
     * tool wants set), and the proxy could not look for it in the traffic without finding it in ordinary text, so the
     * jail gets neither the value nor a placeholder.
     */
    static List<String> skippedCredentials(Policy policy, Map<String, String> hostEnv) {
        List<String> notes = new ArrayList<>();
        for (CredentialRule rule : policy.credentials()) {
            if (rule.optional() && rule.file() == null && available(hostEnv, rule)) {
                String value = hostEnv.get(rule.env());
                if (value.length() < MIN_KNOWN_VALUE_LENGTH) {
                    notes.add(tooShort(policy, rule) + " to be a key: skipped, the jail gets no " + rule.env());
                }
            }
        }
        return notes;
    }

    private static String tooShort(Policy policy, CredentialRule rule) {
        return policy.source() + ": credentials: the value of " + rule.env() + " is shorter than "
                + MIN_KNOWN_VALUE_LENGTH + " characters, too short";
    }

    /** Whether an optional rule's value is there to read; a rule that is not gets skipped, not refused. */
    private static boolean available(Map<String, String> hostEnv, CredentialRule rule) {
        if (rule.file() != null) {
            return Files.isRegularFile(rule.file());
        }
        String value = hostEnv.get(rule.env());
        return value != null && !value.isEmpty();
    }

    /**
     * A fresh placeholder for {@code real}: as long as the value when the value is long enough for the prefix and
     * {@value #PLACEHOLDER_RANDOM_BYTES} random bytes, so that the proxy can swap a reflected value back to it in a
     * response without changing its framing (ResponseScrubber).
     */
    /** The project's stable placeholder for {@code variable}, of the same length rule as {@link #newPlaceholder}. */
    static String stablePlaceholder(CredentialPlaceholders placeholders, String variable, String real) {
        int length = PLACEHOLDER_PREFIX.length()
                + Math.max(2 * PLACEHOLDER_RANDOM_BYTES, real.length() - PLACEHOLDER_PREFIX.length());
        String placeholder = placeholders.placeholder(PLACEHOLDER_PREFIX, variable, length);
        if (placeholder.contains(real) || real.contains(placeholder)) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT, "the value of " + variable + " contains its own placeholder; it is no key");
        }
        return placeholder;
    }

    static String newPlaceholder(SecureRandom random, String real) {
        int hexChars = Math.max(2 * PLACEHOLDER_RANDOM_BYTES, real.length() - PLACEHOLDER_PREFIX.length());
        while (true) {
            byte[] bytes = new byte[(hexChars + 1) / 2];
            random.nextBytes(bytes);
            String placeholder =
                    PLACEHOLDER_PREFIX + HexFormat.of().formatHex(bytes).substring(0, hexChars);
            // Never true in practice; checked because the proxy refuses such a pair.
            if (!placeholder.contains(real) && !real.contains(placeholder)) {
                return placeholder;
            }
        }
    }

    private static String knownFromEnv(Policy policy, Map<String, String> hostEnv, String name) {
        String value = hostEnv.get(name);
        if (value == null || value.isEmpty()) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    policy.source() + ": redaction.known_values: env " + name
                            + " is not set in agentjail's environment; set it, or remove the entry");
        }
        return checkLength(policy, "env " + name, value);
    }

    /** A secret's file is small: a token, a key. More than this is not one (or is /dev/zero). */
    static final long MAX_SECRET_FILE_BYTES = 64 * 1024;

    /**
     * Reads a secret from {@code file}, a regular file of at most {@value #MAX_SECRET_FILE_BYTES} bytes: a FIFO would
     * hang the start, a device ({@code /dev/zero}, a terminal) never end or read what it should not.
     */
    static String readSecretFile(Path file) throws IOException {
        java.nio.file.attribute.BasicFileAttributes attributes =
                Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class);
        if (!attributes.isRegularFile()) {
            throw new IOException("not a regular file");
        }
        if (attributes.size() > MAX_SECRET_FILE_BYTES) {
            throw new IOException("larger than " + MAX_SECRET_FILE_BYTES + " bytes, which no secret is");
        }
        try (java.io.InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes((int) MAX_SECRET_FILE_BYTES + 1);
            if (bytes.length > MAX_SECRET_FILE_BYTES) {
                throw new IOException("larger than " + MAX_SECRET_FILE_BYTES + " bytes, which no secret is");
            }
            return new String(bytes, StandardCharsets.UTF_8).strip();
        }
    }

    private static String knownFromFile(Policy policy, Path file) {
        String value;
        try {
            value = readSecretFile(file);
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    policy.source() + ": redaction.known_values: cannot read file " + file + ": "
                            + IoErrors.describe(file, e));
        }
        return checkLength(policy, "file " + file, value);
    }

    private static String checkLength(Policy policy, String what, String value) {
        if (value.length() < MIN_KNOWN_VALUE_LENGTH) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    policy.source() + ": redaction.known_values: the value of " + what + " is shorter than "
                            + MIN_KNOWN_VALUE_LENGTH + " characters; so short a value would be found in ordinary"
                            + " traffic");
        }
        return value;
    }

    private static String credentialValue(Policy policy, Map<String, String> hostEnv, CredentialRule rule) {
        String where = policy.source() + ": credentials: " + rule.env();
        if (rule.file() != null) {
            String value;
            try {
                value = readSecretFile(rule.file());
            } catch (IOException e) {
                throw new CliException(
                        ExitCodes.ENVIRONMENT,
                        where + ": cannot read the credential file " + rule.file() + ": "
                                + IoErrors.describe(rule.file(), e));
            }
            if (value.isEmpty()) {
                throw new CliException(
                        ExitCodes.ENVIRONMENT, where + ": the credential file " + rule.file() + " is empty");
            }
            return value;
        }
        String value = hostEnv.get(rule.env());
        if (value == null || value.isEmpty()) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    where + " is not set in agentjail's environment; agentjail reads the real value there (or"
                            + " from the rule's file:) and gives the jail a placeholder");
        }
        return value;
    }

    private static String systemRootsPem() {
        try {
            return SystemRoots.pem();
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT, "cannot read the system's CA certificates: " + IoErrors.describe(e), e);
        }
    }

    private static List<X509Certificate> parseRoots(String pem) {
        try {
            List<X509Certificate> roots = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                roots.add((X509Certificate) c);
            }
            return roots;
        } catch (CertificateException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT, "cannot parse the system's CA certificates: " + e.getMessage(), e);
        }
    }

    private static List<X509Certificate> upstreamCas(Policy policy) {
        List<X509Certificate> cas = new ArrayList<>();
        for (Path file : policy.tls().upstreamCa()) {
            try {
                cas.addAll(TrustBundle.readPem(file));
            } catch (IOException e) {
                String message = IoErrors.describe(e);
                throw new CliException(
                        ExitCodes.USAGE,
                        policy.source() + ": tls.upstream_ca: "
                                + (message.contains(file.toString()) ? message : file + ": " + message),
                        e);
            }
        }
        return cas;
    }

    /** A small pool that mints leaf certificates and builds TLS contexts off the proxy's event loops. */
    private static ExecutorService certificateExecutor() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                CERT_THREADS,
                CERT_THREADS,
                30,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(CERT_QUEUE),
                Thread.ofPlatform().daemon().name("certs-", 0).factory());
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
