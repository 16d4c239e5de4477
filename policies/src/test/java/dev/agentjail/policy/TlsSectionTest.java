package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TlsSectionTest {
    @TempDir
    Path dir;

    @TempDir
    Path home;

    @BeforeEach
    void createFiles() throws Exception {
        Files.createDirectories(dir.resolve("certs"));
        Files.writeString(dir.resolve("certs/wiremock.pem"), "not parsed here\n");
        Files.writeString(dir.resolve("ca.pem"), "x");
        Files.createDirectories(home.resolve(".config/agentjail"));
        Files.writeString(home.resolve(".config/agentjail/corp.pem"), "x");
    }

    private TlsSettings load(String section) throws PolicyException {
        return PolicyLoader.parse("version: 1\ntls:\n" + section, "p.yaml", dir, home)
                .tls();
    }

    @Test
    void filesResolveAgainstThePolicyDirectoryOrHome() throws Exception {
        Path absolute = dir.resolve("ca.pem").toAbsolutePath();
        TlsSettings tls = load("""
                  upstream_ca:
                    - certs/wiremock.pem
                    - ~/.config/agentjail/corp.pem
                    - %s
                """.formatted(absolute));
        assertEquals(
                List.of(dir.resolve("certs/wiremock.pem"), home.resolve(".config/agentjail/corp.pem"), absolute),
                tls.upstreamCa());
    }

    @Test
    void loadResolvesAgainstTheFilesParent() throws Exception {
        Path policy = dir.resolve("certs/policy.yaml");
        Files.writeString(policy, "version: 1\ntls:\n  upstream_ca: [wiremock.pem, ../ca.pem]\n");
        assertEquals(
                List.of(dir.resolve("certs/wiremock.pem"), dir.resolve("ca.pem")),
                PolicyLoader.load(policy, home).tls().upstreamCa());
    }

    @Test
    void parseWithoutABaseDirUsesTheCurrentDirectory() throws Exception {
        Path cwd = Path.of("").toAbsolutePath();
        Path pom = cwd.resolve("pom.xml");
        assumeTrue(Files.isRegularFile(pom), "runs in the module directory");
        assertEquals(
                List.of(pom),
                PolicyLoader.parse("version: 1\ntls: {upstream_ca: [pom.xml]}\n", "p.yaml")
                        .tls()
                        .upstreamCa());
    }

    @Test
    void absentOrEmptyIsTheSystemTrustStoreOnly() throws Exception {
        assertEquals(
                TlsSettings.defaults(),
                PolicyLoader.parse("version: 1\n", "p.yaml").tls());
        assertEquals(TlsSettings.defaults(), load("  {}\n"));
        assertEquals(TlsSettings.defaults(), load("  upstream_ca: []\n"));
        assertEquals(List.of(), TlsSettings.defaults().upstreamCa());
    }

    static Stream<Arguments> badSections() {
        return Stream.of(
                arguments(
                        "  upstream-ca: []\n",
                        "p.yaml:3: tls.upstream-ca: unknown key 'upstream-ca' (did you mean" + " 'upstream_ca'?)"),
                arguments(
                        "  ciphers: []\n",
                        "p.yaml:3: tls.ciphers: unknown key 'ciphers' (expected one of: upstream_ca)"),
                arguments("  upstream_ca: ca.pem\n", "p.yaml:3: tls.upstream_ca: expected a list, got 'ca.pem'"),
                arguments("  upstream_ca: [[ca.pem]]\n", "p.yaml:3: tls.upstream_ca[0]: expected a string, got a list"),
                arguments(
                        "  upstream_ca:\n    - ca.pem\n    - ./certs/../ca.pem\n",
                        "p.yaml:5: tls.upstream_ca[1]: './certs/../ca.pem' is already listed at tls.upstream_ca[0]"),
                arguments(
                        "  upstream_ca: [\"~alice/ca.pem\"]\n",
                        "p.yaml:3: tls.upstream_ca[0]: invalid path '~alice/ca.pem': '~user' is not supported;"
                                + " write '~/' for your own home"),
                arguments("  upstream_ca: [\"\"]\n", "p.yaml:3: tls.upstream_ca[0]: invalid path '': empty path"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badSections")
    void badSectionIsRefusedWithFileLineAndKey(String section, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> load(section));
        assertEquals(message, e.getMessage());
    }

    @Test
    void missingFileIsRefusedWithItsResolvedPath() {
        PolicyException e = assertThrows(
                PolicyException.class, () -> load("  upstream_ca:\n    - ca.pem\n    - certs/missing.pem\n"));
        assertEquals(
                "p.yaml:5: tls.upstream_ca[1]: cannot read 'certs/missing.pem' (" + dir.resolve("certs/missing.pem")
                        + "): no such file",
                e.getMessage());
    }

    @Test
    void directoryIsRefused() {
        PolicyException e = assertThrows(PolicyException.class, () -> load("  upstream_ca: [certs]\n"));
        assertEquals(
                "p.yaml:3: tls.upstream_ca[0]: cannot read 'certs' (" + dir.resolve("certs") + "): not a regular"
                        + " file",
                e.getMessage());
    }

    @Test
    void unreadableFileIsRefused() throws Exception {
        Path file = dir.resolve("secret.pem");
        Files.writeString(file, "x");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("---------"));
        assumeFalse(Files.isReadable(file), "root reads every file");
        PolicyException e = assertThrows(PolicyException.class, () -> load("  upstream_ca: [secret.pem]\n"));
        assertEquals(
                "p.yaml:3: tls.upstream_ca[0]: cannot read 'secret.pem' (" + file + "): permission denied",
                e.getMessage());
    }

    @Test
    void recordChecksAndCopies() {
        assertThrows(IllegalArgumentException.class, () -> new TlsSettings(List.of(Path.of("relative.pem"))));
        assertThrows(
                IllegalArgumentException.class, () -> new TlsSettings(List.of(Path.of("/a.pem"), Path.of("/a.pem"))));
    }
}
