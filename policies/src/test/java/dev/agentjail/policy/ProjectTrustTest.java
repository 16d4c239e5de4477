package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A project policy's entries that reach outside the jail and the project need the user's trust in exactly the
 * project-layer files; every other layer, and the presets, are trusted as they are.
 */
class ProjectTrustTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

    @TempDir
    Path tmp;

    private Path dir;
    private Path project;
    private Path home;

    @BeforeEach
    void layout() throws IOException {
        dir = tmp.toRealPath();
        project = Files.createDirectories(dir.resolve("project"));
        home = Files.createDirectories(dir.resolve("home"));
        Files.createDirectories(dir.resolve("outside"));
        Files.writeString(dir.resolve("outside/ca.pem"), "x");
        Files.createDirectories(project.resolve("certs"));
        Files.writeString(project.resolve("certs/ca.pem"), "x");
    }

    private Path write(Path file, String yaml) throws IOException {
        Files.createDirectories(file.getParent());
        return Files.writeString(file, yaml);
    }

    private Path projectFile(String yaml) throws IOException {
        return write(project.resolve(".agentjail.yaml"), yaml);
    }

    private EffectivePolicy load(PolicyStack.Input... inputs) throws PolicyException {
        return PolicyStack.load(List.of(inputs), home);
    }

    private EffectivePolicy loadProject() throws PolicyException {
        return load(PolicyStack.Input.file(PolicyLayer.PROJECT, project.resolve(".agentjail.yaml")));
    }

    private static TrustedProjects trusting(EffectivePolicy policy) {
        return TrustedProjects.none().with(policy.projectSnapshot().orElseThrow(), NOW);
    }

    /** Each kind of entry that needs trust: the policy (line 3 holds the entry) and its key. */
    static Stream<Arguments> requests() {
        return Stream.of(
                arguments("""
                        version: 1
                        credentials:
                          - env: GITHUB_TOKEN
                            hosts: [api.example.com]
                            header: authorization
                        network: {allow: [api.example.com]}
                        """, "credentials[0]", "hands the host's 'GITHUB_TOKEN' to requests to api.example.com"),
                arguments(
                        """
                        version: 1
                        credentials:
                          - {env: GH, file: ~/.config/gh/token, hosts: [api.example.com], header: authorization}
                        network: {allow: [api.example.com]}
                        """,
                        "credentials[0]",
                        "hands the host file '~/.config/gh/token' to requests to api.example.com"),
                arguments(
                        "version: 1\nenv:\n  forward: [AWS_SECRET_ACCESS_KEY]\n",
                        "env.forward[0]",
                        "copies the host's environment variable 'AWS_SECRET_ACCESS_KEY' into the jail"),
                arguments(
                        "version: 1\nfilesystem:\n  read: [~/.ssh]\n",
                        "filesystem.read[0]",
                        "binds the host path '~/.ssh' into the jail read-only"),
                arguments(
                        "version: 1\nfilesystem:\n  write: [/opt/tools]\n",
                        "filesystem.write[0]",
                        "binds the host path '/opt/tools' into the jail read-write"),
                arguments(
                        "version: 1\njail:\n  devices: [camera]\n",
                        "jail.devices[0]",
                        "gives the jail the host's camera devices"),
                arguments(
                        "version: 1\ntls:\n  upstream_ca: [../outside/ca.pem]\n",
                        "tls.upstream_ca[0]",
                        "makes the proxy trust the CA in '../outside/ca.pem' for every upstream server, also those"
                                + " credentials go to"),
                arguments(
                        "version: 1\ntls:\n  upstream_ca: [certs/ca.pem]\n",
                        "tls.upstream_ca[0]",
                        "makes the proxy trust the CA in 'certs/ca.pem' for every upstream server, also those"
                                + " credentials go to"),
                arguments(
                        "version: 1\naudit:\n  log: ~/.bashrc\n",
                        "audit.log",
                        "makes agentjail write its audit log to the host file '~/.bashrc'"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {metadata.test: 169.254.169.254}\n  allow: [metadata.test]\n",
                        "network.resolve.metadata.test",
                        "sends the jail's requests for 'metadata.test' to 169.254.169.254 (the host's own or a"
                                + " private address too), past DNS and the SSRF guard"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [\"127.0.0.1:6379\"]\n",
                        "network.allow[0]",
                        "allows the IP address '127.0.0.1:6379' (the host's own or a private address too) past the"
                                + " SSRF guard"));
    }

    @Test
    void hostNamesAndWildcardsInAllowNeedNoTrust() throws Exception {
        projectFile(
                "version: 1\nnetwork:\n  allow: [api.example.com, \"*.githubusercontent.com\", \"pypi.test:8443\"]\n");
        EffectivePolicy policy = loadProject();
        assertEquals(List.of(), policy.projectRequests());
    }

    @ParameterizedTest
    @MethodSource("requests")
    void refusedUntilTrusted(String yaml, String key, String asks) throws Exception {
        Path file = projectFile(yaml);
        EffectivePolicy policy = loadProject();

        assertEquals(List.of(new ProjectRequest(file.toString(), 3, key, asks)), policy.projectRequests());
        ProjectTrust.Result result = ProjectTrust.evaluate(policy, TrustedProjects.none());
        assertEquals(ProjectTrust.Status.UNTRUSTED, result.status());
        PolicyException e =
                assertThrows(PolicyException.class, () -> ProjectTrust.require(policy, TrustedProjects.none()));
        assertEquals(
                file + ":3: " + key + ": " + asks + ", which reaches outside the jail and the project; a project"
                        + " policy needs your trust for that; review and trust it with: agentjail policy trust"
                        + " --project " + project,
                e.getMessage());
    }

    @ParameterizedTest
    @MethodSource("requests")
    void acceptedOnceTrusted(String yaml, String key, String asks) throws Exception {
        projectFile(yaml);
        EffectivePolicy policy = loadProject();

        ProjectTrust.Result result = ProjectTrust.evaluate(policy, trusting(policy));

        assertEquals(ProjectTrust.Status.TRUSTED, result.status());
        assertTrue(result.allowed());
        assertEquals(List.of(), result.warnings());
        ProjectTrust.require(policy, trusting(policy));
    }

    @ParameterizedTest
    @MethodSource("requests")
    void trustLapsesWhenTheFileChanges(String yaml, String key, String asks) throws Exception {
        Path file = projectFile(yaml);
        TrustedProjects trusted = trusting(loadProject());
        Files.writeString(file, yaml + "# an innocent-looking comment\n");

        ProjectTrust.Result result = ProjectTrust.evaluate(loadProject(), trusted);

        assertEquals(ProjectTrust.Status.CHANGED, result.status());
        assertTrue(
                result.error()
                        .getMessage()
                        .endsWith("; you trusted this project policy, but " + file + " changed since; review and"
                                + " trust it again with: agentjail policy trust --project " + project),
                result.error().getMessage());
    }

    @ParameterizedTest
    @EnumSource(
            value = PolicyLayer.class,
            names = {"TEAM", "USER", "OVERRIDE"})
    void otherLayersNeedNoTrust(PolicyLayer layer) throws Exception {
        Path file = write(dir.resolve("policy.yaml"), """
                version: 1
                env: {forward: [AWS_SECRET_ACCESS_KEY]}
                filesystem: {read: [~/.ssh]}
                jail: {devices: [camera, audio]}
                """);

        EffectivePolicy policy = load(PolicyStack.Input.file(layer, file));

        assertEquals(List.of(), policy.projectRequests());
        assertEquals(
                ProjectTrust.Status.NOT_NEEDED,
                ProjectTrust.evaluate(policy, TrustedProjects.none()).status());
    }

    @Test
    void aPresetIsNotProjectEvenWhenTheProjectExtendsIt() throws Exception {
        // claude-code carries credentials and env.forward entries; it ships with agentjail.
        projectFile("version: 1\nextends: [claude-code]\n");

        EffectivePolicy extended = loadProject();
        EffectivePolicy picked = load(
                PolicyStack.Input.preset(PolicyLayer.PROJECT, "claude-code"),
                PolicyStack.Input.file(PolicyLayer.PROJECT, project.resolve(".agentjail.yaml")));

        assertFalse(extended.policy().credentials().isEmpty());
        assertEquals(List.of(), extended.projectRequests());
        assertEquals(List.of(), picked.projectRequests());
        assertEquals(
                List.of(project.resolve(".agentjail.yaml").toString()),
                List.copyOf(extended.projectSnapshot().orElseThrow().files().keySet()));
    }

    @Test
    void aFileTheProjectExtendsByPathIsProjectToo() throws Exception {
        Path shared = write(dir.resolve("shared/base.yaml"), "version: 1\njail:\n  devices: [audio]\n");
        Path file = projectFile("version: 1\nextends: [../shared/base.yaml]\n");

        EffectivePolicy policy = loadProject();

        assertEquals(
                List.of(new ProjectRequest(
                        shared.toString(), 3, "jail.devices[0]", "gives the jail the host's audio devices")),
                policy.projectRequests());
        ProjectSnapshot snapshot = policy.projectSnapshot().orElseThrow();
        assertEquals(project, snapshot.root());
        assertEquals(
                List.of(shared.toString(), file.toString()),
                List.copyOf(snapshot.files().keySet()));

        // Trust covers both files: a change to the extended one lapses it.
        TrustedProjects trusted = trusting(policy);
        assertEquals(
                ProjectTrust.Status.TRUSTED,
                ProjectTrust.evaluate(loadProject(), trusted).status());
        Files.writeString(shared, "version: 1\njail:\n  devices: [audio, camera]\n");
        ProjectTrust.Result lapsed = ProjectTrust.evaluate(loadProject(), trusted);
        assertEquals(ProjectTrust.Status.CHANGED, lapsed.status());
        assertTrue(lapsed.reason().contains(shared + " changed since"), lapsed.reason());
    }

    @Test
    void trustInOneProjectIsNotTrustInAnother() throws Exception {
        projectFile("version: 1\nenv: {forward: [TOKEN]}\n");
        TrustedProjects trusted = trusting(loadProject());
        Path other = Files.createDirectories(dir.resolve("other"));
        Files.copy(project.resolve(".agentjail.yaml"), other.resolve(".agentjail.yaml"));

        EffectivePolicy copy = load(PolicyStack.Input.file(PolicyLayer.PROJECT, other.resolve(".agentjail.yaml")));

        assertEquals(
                ProjectTrust.Status.UNTRUSTED,
                ProjectTrust.evaluate(copy, trusted).status());
    }

    @Test
    void pathsInsideTheProjectNeedNoTrustUnlessALinkLeadsOut() throws Exception {
        Files.createDirectories(project.resolve("tools"));
        Files.createSymbolicLink(project.resolve("keys"), home);
        projectFile("""
                version: 1
                filesystem:
                  read: [%s]
                  write: [%s]
                """.formatted(project.resolve("tools"), project.resolve("keys")));

        List<ProjectRequest> requests = loadProject().projectRequests();

        assertEquals(
                List.of("filesystem.write[0]"),
                requests.stream().map(ProjectRequest::key).toList());
    }

    @Test
    void aTeamPolicyCanForbidTrustAltogether() throws Exception {
        Path team = write(dir.resolve("team.yaml"), "version: 1\ntrust:\n  projects: never\nlocked: [trust]\n");
        Path file = projectFile("version: 1\nenv: {forward: [TOKEN]}\n");
        PolicyStack.Input[] inputs = {
            PolicyStack.Input.file(PolicyLayer.TEAM, team), PolicyStack.Input.file(PolicyLayer.PROJECT, file)
        };
        EffectivePolicy policy = load(inputs);

        ProjectTrust.Result result = ProjectTrust.evaluate(policy, trusting(policy));

        assertEquals(ProjectTrust.Status.FORBIDDEN, result.status());
        assertEquals(
                file + ":2: env.forward[0]: copies the host's environment variable 'TOKEN' into the jail, which"
                        + " reaches outside the jail and the project; the team policy forbids trusting project"
                        + " policies (" + team + ":3: trust.projects: never); ask for it in your user policy or a"
                        + " --policy file instead",
                result.error().getMessage());
        // Locked, so the user cannot turn it back.
        Path user = write(dir.resolve("user.yaml"), "version: 1\ntrust: {projects: explicit}\n");
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> load(
                        PolicyStack.Input.file(PolicyLayer.TEAM, team),
                        PolicyStack.Input.file(PolicyLayer.USER, user)));
        assertEquals("trust", e.key());
        assertTrue(e.getMessage().contains("locked by the team policy"), e.getMessage());
    }

    @Test
    void withoutALockTheUserPolicyDecides() throws Exception {
        Path team = write(dir.resolve("team.yaml"), "version: 1\ntrust: {projects: never}\n");
        Path user = write(dir.resolve("user.yaml"), "version: 1\ntrust: {projects: explicit}\n");
        Path file = projectFile("version: 1\nenv: {forward: [TOKEN]}\n");

        EffectivePolicy policy = load(
                PolicyStack.Input.file(PolicyLayer.TEAM, team),
                PolicyStack.Input.file(PolicyLayer.USER, user),
                PolicyStack.Input.file(PolicyLayer.PROJECT, file));

        assertEquals(ProjectTrust.Mode.EXPLICIT, policy.projectTrust().mode());
        assertEquals(
                ProjectTrust.Status.TRUSTED,
                ProjectTrust.evaluate(policy, trusting(policy)).status());
    }

    @Test
    void aProjectCannotVouchForItself() throws Exception {
        Path file = projectFile("version: 1\ntrust:\n  projects: explicit\n");

        PolicyException e = assertThrows(PolicyException.class, this::loadProject);

        assertEquals(file + ":3: trust.projects: " + TrustSection.FROM_PROJECT, e.getMessage());
    }

    @Test
    void anUnknownTrustValueIsRefused() throws Exception {
        Path file = write(dir.resolve("user.yaml"), "version: 1\ntrust: {projects: always}\n");

        PolicyException e =
                assertThrows(PolicyException.class, () -> load(PolicyStack.Input.file(PolicyLayer.USER, file)));

        assertEquals(file + ":2: trust.projects: unknown value 'always' (expected explicit or never)", e.getMessage());
    }

    @Test
    void aHostSideServerStaysRefusedEvenWhenTrusted() throws Exception {
        projectFile("""
                version: 1
                mcp:
                  servers:
                    - {name: local, command: [server]}
                """);

        PolicyException e = assertThrows(PolicyException.class, this::loadProject);

        assertEquals("mcp.servers[0].command", e.key());
    }

    @Test
    void showMarksTheEntriesThatNeedTrust() throws Exception {
        Path file = projectFile("version: 1\nenv:\n  forward: [TOKEN]\n  set: {EDITOR: vi}\n");
        EffectivePolicy policy = loadProject();

        String trusted = policy.render(true, ProjectTrust.evaluate(policy, trusting(policy)));
        String untrusted = policy.render(true, ProjectTrust.evaluate(policy, TrustedProjects.none()));

        assertTrue(trusted.contains("    - TOKEN  # " + file + ":3 (trusted project entry)\n"), trusted);
        assertTrue(trusted.contains("    EDITOR: vi  # " + file + ":4\n"), trusted);
        assertTrue(
                untrusted.contains("    - TOKEN  # " + file + ":3 (not trusted: agentjail run refuses it (see"
                        + " agentjail policy trust))\n"),
                untrusted);
        assertEquals(policy.render(false), policy.render(false, ProjectTrust.evaluate(policy, trusting(policy))));
    }

    @Test
    void theTrustFileRoundTrips() throws Exception {
        projectFile("version: 1\nenv: {forward: [TOKEN]}\n");
        EffectivePolicy policy = loadProject();
        Path store = dir.resolve("state/agentjail/" + TrustedProjects.FILE_NAME);
        ProjectSnapshot odd = new ProjectSnapshot(
                Path.of("/odd \"dir\"\\\n\u2028\u0085x"), java.util.Map.of("/odd/.agentjail.yaml", "0".repeat(64)));

        Files.createDirectories(store.getParent());
        Files.writeString(
                store,
                TrustedProjects.none()
                        .with(policy.projectSnapshot().orElseThrow(), NOW)
                        .with(odd, NOW)
                        .json());
        TrustedProjects read = TrustedProjects.read(store);

        assertEquals(List.of(odd.root(), project), read.roots());
        assertEquals(odd.files(), read.grant(odd.root()).orElseThrow().files());
        assertEquals(NOW, read.grant(project).orElseThrow().trustedAt());
        assertEquals(
                ProjectTrust.Status.TRUSTED, ProjectTrust.evaluate(policy, read).status());
        TrustedProjects revoked = read.without(project);
        Files.writeString(store, revoked.json());
        assertEquals(
                ProjectTrust.Status.UNTRUSTED,
                ProjectTrust.evaluate(policy, TrustedProjects.read(store)).status());
        assertEquals(
                List.of(), TrustedProjects.read(dir.resolve("missing.json")).roots());
    }

    @Test
    void aMalformedTrustFileIsAnErrorWithItsLine() throws Exception {
        Path store =
                write(dir.resolve("trusted.json"), "{\"version\": 1,\n \"projects\": {\"/p\": {\"files\": {}}}}\n");

        PolicyException e = assertThrows(PolicyException.class, () -> TrustedProjects.read(store));

        assertEquals(2, e.line());
        assertTrue(e.getMessage().contains("trusted_at: missing required key"), e.getMessage());
    }
}
