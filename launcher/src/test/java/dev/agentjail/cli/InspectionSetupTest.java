package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.certs.TrustBundle;
import dev.agentjail.jail.TrustFiles;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.inspect.Inspection;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InspectionSetupTest {
    private static final String SECRET = "s3cr3t-value-from-env";
    private static final String REAL_KEY = "real-api-key-0123456789";
    private static final String PLACEHOLDER = "agentjail-placeholder-[0-9a-f]{32,}";

    @TempDir
    Path dir;

    @Test
    void knownValuesComeFromTheHostEnvironmentAndTrimmedFiles() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "  file-secret-value\n");
        Policy policy = policy("""
                redaction:
                  known_values:
                    - env: DATABASE_PASSWORD
                    - file: %s
                """.formatted(file));
        Inspection inspection =
                InspectionSetup.inspection(policy, Map.of("DATABASE_PASSWORD", SECRET), new SecureRandom());
        assertEquals(
                Map.of("DATABASE_PASSWORD", SECRET, file.toString(), "file-secret-value"), inspection.knownValues());
        assertEquals(List.of(), inspection.credentials());
    }

    @Test
    void aMissingKnownValueNamesTheKeyAndTheVariable() throws Exception {
        Policy policy = policy("""
                redaction:
                  known_values: [{env: DATABASE_PASSWORD}]
                """);
        CliException e = assertThrows(
                CliException.class,
                () -> InspectionSetup.inspection(policy, Map.of("OTHER", SECRET), new SecureRandom()));
        assertEquals(ExitCodes.ENVIRONMENT, e.exitCode());
        assertTrue(e.getMessage().contains("redaction.known_values"), e.getMessage());
        assertTrue(e.getMessage().contains("DATABASE_PASSWORD"), e.getMessage());
        assertTrue(e.getMessage().contains("policy.yaml"), e.getMessage());
    }

    @Test
    void anUnreadableKnownValueFileNamesTheFile() throws Exception {
        Path missing = dir.resolve("no-such-token");
        Policy policy = policy("""
                redaction:
                  known_values: [{file: %s}]
                """.formatted(missing));
        CliException e = assertThrows(
                CliException.class, () -> InspectionSetup.inspection(policy, Map.of(), new SecureRandom()));
        assertEquals(ExitCodes.ENVIRONMENT, e.exitCode());
        assertTrue(e.getMessage().contains("redaction.known_values"), e.getMessage());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("no such file"), e.getMessage());
    }

    /** A project may name a known value's file without trust: no file it names can hang or exhaust the start. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"/dev/zero", "fifo", "large", "directory"})
    @org.junit.jupiter.api.Timeout(30)
    void aKnownValueFileThatIsNoSmallRegularFileIsRefused(String kind) throws Exception {
        Path file = switch (kind) {
            case "/dev/zero" -> Path.of("/dev/zero");
            case "fifo" -> {
                Path fifo = dir.resolve("fifo");
                assertEquals(
                        0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
                yield fifo;
            }
            case "large" -> Files.write(dir.resolve("large"), new byte[100 * 1024]);
            default -> Files.createDirectories(dir.resolve("dir"));
        };
        Policy policy = policy("""
                redaction:
                  known_values: [{file: %s}]
                """.formatted(file));

        CliException e = assertThrows(
                CliException.class, () -> InspectionSetup.inspection(policy, Map.of(), new SecureRandom()));

        assertEquals(ExitCodes.ENVIRONMENT, e.exitCode());
        assertTrue(e.getMessage().contains("cannot read file " + file), e.getMessage());
    }

    @Test
    void aShortKnownValueIsRefusedWithoutShowingIt() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "  tiny42 \n");
        Policy policy = policy("""
                redaction:
                  known_values: [{env: PIN}, {file: %s}]
                """.formatted(file));
        CliException env = assertThrows(
                CliException.class,
                () -> InspectionSetup.inspection(policy, Map.of("PIN", "1234567"), new SecureRandom()));
        assertEquals(ExitCodes.ENVIRONMENT, env.exitCode());
        assertTrue(env.getMessage().contains("PIN") && env.getMessage().contains("shorter than 8"), env.getMessage());
        assertFalse(env.getMessage().contains("1234567"), env.getMessage());
        CliException fromFile = assertThrows(
                CliException.class,
                () -> InspectionSetup.inspection(policy, Map.of("PIN", "12345678"), new SecureRandom()));
        assertTrue(fromFile.getMessage().contains(file.toString()), fromFile.getMessage());
        assertFalse(fromFile.getMessage().contains("tiny42"), fromFile.getMessage());
    }

    @Test
    void eachCredentialGetsAFreshPlaceholderThatIsNeverItsValue() throws Exception {
        Path file = Files.writeString(dir.resolve("gh-token"), "ghp-real-token-from-file\n");
        Policy policy = policy("""
                network:
                  allow: [api.example.com, api.github.com]
                credentials:
                  - {env: EXAMPLE_KEY, hosts: [api.example.com], header: x-api-key}
                  - {env: GITHUB_TOKEN, file: %s, hosts: [api.github.com], header: authorization}
                """.formatted(file));
        Map<String, String> host = Map.of("EXAMPLE_KEY", REAL_KEY, "GITHUB_TOKEN", "ignored-because-file-wins");
        Inspection first = InspectionSetup.inspection(policy, host, new SecureRandom());
        Inspection second = InspectionSetup.inspection(policy, host, new SecureRandom());

        assertEquals(2, first.credentials().size());
        InjectedCredential example = first.credentials().get(0);
        InjectedCredential github = first.credentials().get(1);
        assertEquals("EXAMPLE_KEY", example.rule().env());
        assertEquals(REAL_KEY, example.value());
        assertEquals("ghp-real-token-from-file", github.value());
        for (InjectedCredential c : first.credentials()) {
            assertTrue(c.placeholder().matches(PLACEHOLDER), c.placeholder());
            assertFalse(c.placeholder().contains(c.value()));
        }
        assertNotEquals(example.placeholder(), github.placeholder());
        assertNotEquals(example.placeholder(), second.credentials().get(0).placeholder(), "a new one per session");
        assertNotEquals(github.placeholder(), second.credentials().get(1).placeholder(), "a new one per session");
        assertFalse(first.toString().contains(REAL_KEY), first::toString);
        assertFalse(first.toString().contains(example.placeholder()), first::toString);
    }

    @Test
    void aCredentialMissingOnTheHostNamesTheVariableOrFileAndThePolicy() throws Exception {
        Policy fromEnv = policy("""
                network:
                  allow: [api.example.com]
                credentials:
                  - {env: EXAMPLE_KEY, hosts: [api.example.com], header: x-api-key}
                """);
        CliException e = assertThrows(
                CliException.class, () -> InspectionSetup.inspection(fromEnv, Map.of(), new SecureRandom()));
        assertEquals(ExitCodes.ENVIRONMENT, e.exitCode());
        assertTrue(e.getMessage().contains("credentials") && e.getMessage().contains("EXAMPLE_KEY"), e.getMessage());
        assertTrue(e.getMessage().contains("policy.yaml"), e.getMessage());

        Path missing = dir.resolve("missing-token");
        Policy fromFile = policy("""
                network:
                  allow: [api.example.com]
                credentials:
                  - {env: EXAMPLE_KEY, file: %s, hosts: [api.example.com], header: x-api-key}
                """.formatted(missing));
        CliException f = assertThrows(
                CliException.class,
                () -> InspectionSetup.inspection(fromFile, Map.of("EXAMPLE_KEY", REAL_KEY), new SecureRandom()));
        assertTrue(f.getMessage().contains(missing.toString()), f.getMessage());
        assertFalse(f.getMessage().contains(REAL_KEY), f.getMessage());
    }

    @Test
    void aValueTooShortToBeAKeyIsSkippedForAnOptionalRuleAndRefusedForARequiredOne() throws Exception {
        // OPENAI_API_KEY=dummy is what local OpenAI-compatible servers ask for; it is no key, and the proxy could not
        // look for five letters in the traffic. Before this, the proxy refused to start after the session had begun.
        Policy optional = policy("""
                network:
                  allow: [api.example.com, api.other.com]
                credentials:
                  - {env: EXAMPLE_KEY, hosts: [api.example.com], header: x-api-key, optional: true}
                  - {env: OTHER_KEY, hosts: [api.other.com], header: x-api-key, optional: true}
                """);
        Map<String, String> env = Map.of("EXAMPLE_KEY", "dummy", "OTHER_KEY", REAL_KEY);

        Inspection inspection = InspectionSetup.inspection(optional, env, new SecureRandom());

        assertEquals(
                List.of("OTHER_KEY"),
                inspection.credentials().stream().map(c -> c.rule().env()).toList());
        List<String> notes = InspectionSetup.skippedCredentials(optional, env);
        assertEquals(1, notes.size(), notes::toString);
        assertTrue(notes.get(0).contains("EXAMPLE_KEY") && notes.get(0).contains("shorter than 8"), notes::toString);
        assertFalse(notes.get(0).contains("dummy"), "the note shows no value");
        assertEquals(List.of(), InspectionSetup.skippedCredentials(optional, Map.of("OTHER_KEY", REAL_KEY)));

        Policy required = policy("""
                network:
                  allow: [api.example.com]
                credentials:
                  - {env: EXAMPLE_KEY, hosts: [api.example.com], header: x-api-key}
                """);
        CliException e = assertThrows(
                CliException.class,
                () -> InspectionSetup.inspection(required, Map.of("EXAMPLE_KEY", "dummy"), new SecureRandom()));
        assertEquals(ExitCodes.ENVIRONMENT, e.exitCode());
        assertTrue(e.getMessage().contains("EXAMPLE_KEY") && e.getMessage().contains("shorter than 8"), e.getMessage());
        assertFalse(e.getMessage().contains("dummy"), e.getMessage());
    }

    @Test
    void placeholdersAreTheOnlyValuesTheJailGets() throws Exception {
        Policy policy = policy("""
                network:
                  allow: [api.example.com]
                credentials:
                  - {env: EXAMPLE_KEY, hosts: [api.example.com], header: x-api-key}
                """);
        try (InspectionSetup setup = InspectionSetup.open(
                policy, Map.of("EXAMPLE_KEY", REAL_KEY), dir.resolve("ca"), Clock.systemUTC(), new SecureRandom())) {
            Map<String, String> placeholders = setup.placeholders();
            assertEquals(List.of("EXAMPLE_KEY"), List.copyOf(placeholders.keySet()));
            assertTrue(placeholders.get("EXAMPLE_KEY").matches(PLACEHOLDER));
            assertEquals(setup.inspection().credentials().get(0).placeholder(), placeholders.get("EXAMPLE_KEY"));
            assertNotNull(setup.interception());
        }
    }

    @Test
    void anUpstreamCaFileThatDoesNotParseIsAUsageErrorNamingIt() throws Exception {
        Path bad = Files.writeString(dir.resolve("bad-ca.pem"), "this is not a certificate\n");
        Policy policy = policy("""
                tls:
                  upstream_ca: [%s]
                """.formatted(bad));
        Path caDir = dir.resolve("ca");
        CliException e = assertThrows(
                CliException.class,
                () -> InspectionSetup.open(policy, Map.of(), caDir, Clock.systemUTC(), new SecureRandom()));
        assertEquals(ExitCodes.USAGE, e.exitCode());
        assertTrue(
                e.getMessage().contains("tls.upstream_ca") && e.getMessage().contains(bad.toString()), e.getMessage());
        assertFalse(Files.exists(caDir), "no CA is created when the setup fails before it");
    }

    @Test
    void theCaIsCreatedOnFirstUseAndTheTrustFilesHoldItButNoKey() throws Exception {
        Path caDir = dir.resolve("data").resolve("ca");
        Path session = Files.createDirectory(dir.resolve("session"));
        TrustFiles trust;
        CertificateAuthority ca;
        try (InspectionSetup setup =
                InspectionSetup.open(policy(""), Map.of(), caDir, Clock.systemUTC(), new SecureRandom())) {
            ca = setup.authority();
            trust = setup.writeTrustFiles(session);
        }
        assertTrue(Files.isRegularFile(caDir.resolve(CertificateAuthority.KEY_FILE)));
        assertEquals(session.resolve(InspectionSetup.CA_BUNDLE_FILE), trust.pemBundle());
        assertEquals(session.resolve(InspectionSetup.TRUST_STORE_FILE), trust.trustStore());

        List<X509Certificate> bundle = TrustBundle.readPem(trust.pemBundle());
        assertTrue(bundle.size() > 1, "the system roots and the CA");
        assertEquals(ca.certificate(), bundle.get(bundle.size() - 1));
        String pem = Files.readString(trust.pemBundle(), StandardCharsets.US_ASCII);
        assertFalse(pem.contains("PRIVATE KEY"));

        KeyStore store = KeyStore.getInstance(TrustFiles.TRUST_STORE_TYPE);
        try (InputStream in = Files.newInputStream(trust.trustStore())) {
            store.load(in, TrustFiles.TRUST_STORE_PASSWORD.toCharArray());
        }
        assertEquals(bundle.size(), store.size());
        assertNotNull(store.getCertificateAlias(ca.certificate()), "the CA is a trusted entry");
        for (String alias : Collections.list(store.aliases())) {
            assertTrue(store.isCertificateEntry(alias), alias + " is a certificate, not a key");
        }
        assertTrue(Files.getPosixFilePermissions(trust.trustStore()).contains(PosixFilePermission.OTHERS_READ));

        // A second session reuses the same CA.
        try (InspectionSetup again =
                InspectionSetup.open(policy(""), Map.of(), caDir, Clock.systemUTC(), new SecureRandom())) {
            assertEquals(ca.sha256Fingerprint(), again.authority().sha256Fingerprint());
        }
    }

    private Policy policy(String sections) throws Exception {
        return PolicyLoader.parse("version: 1\n" + sections, "policy.yaml", dir, dir);
    }
}
