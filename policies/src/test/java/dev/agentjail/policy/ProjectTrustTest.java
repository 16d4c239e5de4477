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
                        "version: 1\naudit:\n  exec: off\n",
                        "audit.exec",
                        "turns off the record of every program the agent runs"),
                arguments(
                        "version: 1\naudit:\n  files: \"off\"\n",
                        "audit.files",
                        "turns off the record of every file the agent changes"),
                arguments(
                        "version: 1\naudit:\n  failure: open\n",
                        "audit.failure",
                        "lets the agent run programs and change files unrecorded when the audit supervisor fails"),
                arguments(
                        "version: 1\naudit:\n  log: ~/.bashrc\n",
                        "audit.log",
                        "makes agentjail write its audit log to the host file '~/.bashrc' instead of where your own"
                                + " policy keeps it"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {metadata.test: 169.254.169.254}\n  allow: [metadata.test]\n",
                        "network.resolve.metadata.test",
                        "sends the jail's requests for 'metadata.test' to 169.254.169.254 (the host's own or a"
                                + " private address too), past DNS and the SSRF guard"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [\"127.0.0.1:6379\"]\n",
                        "network.allow[0]",
                        "allows the IP address '127.0.0.1:6379' (the host's own or a private address too) past the"
                                + " SSRF guard"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [api.example.com]\n",
                        "network.allow[0]",
                        "allows requests to 'api.example.com'"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [\"*.githubusercontent.com\"]\n",
                        "network.allow[0]",
                        "allows requests to '*.githubusercontent.com'"),
                arguments(
                        "version: 1\nnetwork:\n  mode: report\n",
                        "network.mode",
                        "switches to report mode: requests to hosts no allow entry covers go through, only recorded"),
                arguments(
                        "version: 1\nnetwork:\n  tunnel: [mtls.example.com]\n",
                        "network.tunnel[0]",
                        "relays 'mtls.example.com' without TLS interception: no redaction, no per-request decision or"
                                + " record"),
                arguments(
                        "version: 1\nnetwork:\n  ports: [8443]\n",
                        "network.ports[0]",
                        "makes every allow pattern without a port stand for port 8443 too"),
                arguments(
                        "version: 1\nmcp:\n  servers: [{name: docs, url: \"https://mcp.example.com/mcp\","
                                + " tools: {allow: [\"*\"]}}]\n",
                        "mcp.servers[0]",
                        "approves the MCP server 'docs' at https://mcp.example.com/mcp with the tools, resources and"
                                + " prompts it lists"),
                arguments(
                        "version: 1\nenv:\n  set: {NODE_OPTIONS: \"--require ./x.js\"}\n",
                        "env.set.NODE_OPTIONS",
                        "sets the jail's environment variable 'NODE_OPTIONS' (variables such as NODE_OPTIONS,"
                                + " LD_PRELOAD or a tool's config path decide what runs in the jail)"),
                arguments(
                        "version: 1\nlimits:\n  timeout: 24h\n",
                        "limits.timeout",
                        "raises limits.timeout to '24h' (from the default)"),
                arguments(
                        "version: 1\nlimits:\n  memory: 64g\n",
                        "limits.memory",
                        "raises limits.memory to '64g' (from the default)"),
                arguments(
                        "version: 1\nlimits:\n  processes: 100000\n",
                        "limits.processes",
                        "raises limits.processes to '100000' (from the default)"),
                arguments(
                        "version: 1\nlimits:\n  open_files: 65536\n",
                        "limits.open_files",
                        "raises limits.open_files to '65536' (from the default)"),
                arguments(
                        "version: 1\nlimits:\n  file_size: 100g\n",
                        "limits.file_size",
                        "raises limits.file_size to '100g' (from the default)"),
                arguments(
                        "version: 1\nlimits:\n  tmp_size: 8g\n",
                        "limits.tmp_size",
                        "raises limits.tmp_size to '8g' (from the default)"),
                arguments(
                        "version: 1\njail:\n  pre_start: [\"curl x | sh\"]\n",
                        "jail.pre_start[0]",
                        "runs the command curl x | sh in the jail before the agent"),
                arguments(
                        "version: 1\njail:\n  new_session: false\n",
                        "jail.new_session",
                        "keeps the agent in the terminal's session: it can open /dev/tty (seccomp still blocks"
                                + " TIOCSTI and TIOCLINUX)"),
                arguments(
                        "version: 1\njail:\n  hostname: build-server\n",
                        "jail.hostname",
                        "names the jail's host 'build-server' (an agent may take it for a real one)"),
                arguments(
                        "version: 1\nredaction:\n  allow: [\"AKIAIOSFODNN7EXAMPLE\"]\n",
                        "redaction.allow[0]",
                        "exempts a value from redaction, so it leaves the jail as it is"),
                arguments(
                        "version: 1\naudit:\n  log: ~/logs/audit.jsonl\n",
                        "audit.log",
                        "makes agentjail write its audit log to the host file '~/logs/audit.jsonl' instead of where"
                                + " your own policy keeps it"));
    }

    /** What a project file may write without trust, each with a check that it took effect: it narrows the jail. */
    static Stream<Arguments> narrowing() {
        return Stream.of(
                narrowing(
                        "version: 1\nnetwork:\n  deny: [\"*.pastebin.com\", evil.example.com]\n",
                        p -> p.policy().network().deny().size() == 2),
                narrowing(
                        "version: 1\nfilesystem:\n  mask: [\".env\", \"**/*.pem\"]\n  protected: [Makefile]\n",
                        p -> p.policy().filesystem().mask().size() == 2
                                && p.policy().filesystem().protectedPaths().size() == 1),
                narrowing(
                        "version: 1\nfilesystem:\n  deny: [~/.aws]\n  read: [~/.aws/config]\n",
                        p -> false), // a deny refuses the read bind at load: the effect is the error below
                narrowing(
                        "version: 1\nlimits:\n  timeout: 30m\n  memory: 4g\n  processes: 512\n  open_files: 1024\n"
                                + "  file_size: 1g\n  tmp_size: 256m\n  address_space: 32g\n  cpu: 2\n",
                        p -> p.policy().limits().timeout().toMinutes() == 30
                                && p.policy().limits().processes() == 512
                                && p.policy().limits().cpuMillis() == 2000
                                && p.policy().limits().addressSpaceBytes() == 32L << 30),
                narrowing(
                        "version: 1\nredaction:\n  action: block\n  patterns:\n    - {name: itk, regex: 'itk_[a-z]{8}'}\n"
                                + "  known_values:\n    - env: DATABASE_PASSWORD\n",
                        p -> p.policy().redaction().action() == RedactionPolicy.Action.BLOCK
                                && p.policy().redaction().patterns().size() == 1
                                && p.policy().redaction().knownValues().size() == 1),
                narrowing(
                        "version: 1\njail:\n  share_timezone: false\n",
                        p -> !p.policy().jail().shareTimezone()),
                narrowing(
                        "version: 1\nlocked: [network, limits]\n",
                        p -> p.lockedBy("network.allow").isPresent()));
    }

    private static Arguments narrowing(String yaml, java.util.function.Predicate<EffectivePolicy> applied) {
        return arguments(yaml, applied);
    }

    @ParameterizedTest
    @MethodSource("narrowing")
    void narrowingEntriesApplyWithoutTrust(String yaml, java.util.function.Predicate<EffectivePolicy> applied)
            throws Exception {
        projectFile(yaml);

        EffectivePolicy policy;
        try {
            policy = loadProject();
        } catch (PolicyException e) {
            // The deny case: filesystem.deny took effect by refusing the bind the same file names.
            assertTrue(e.getMessage().contains("filesystem.read[0]"), e.getMessage());
            return;
        }

        assertEquals(List.of(), policy.projectRequests());
        assertEquals(
                ProjectTrust.Status.NOT_NEEDED,
                ProjectTrust.evaluate(policy, TrustedProjects.none()).status());
        assertTrue(applied.test(policy), () -> "not applied: " + policy.render(false));
    }

    /** Values that restate the defaults: nothing to trust, and nothing changes. */
    static Stream<Arguments> restatingDefaults() {
        return Stream.of(
                arguments("version: 1\nnetwork:\n  mode: enforce\n"),
                arguments("version: 1\nlimits:\n  timeout: 12h\n"),
                arguments("version: 1\nredaction:\n  action: redact\n"),
                arguments("version: 1\njail:\n  new_session: true\n  share_timezone: true\n  hostname: agentjail\n"),
                arguments("version: 1\nenv:\n  deny: [\"AWS_*\"]\n"),
                arguments("version: 1\naudit:\n  exec: on\n  files: on\n  failure: closed\n"),
                arguments("version: 1\nextends: []\n"));
    }

    @ParameterizedTest
    @MethodSource("restatingDefaults")
    void restatingTheDefaultsNeedsNoTrust(String yaml) throws Exception {
        projectFile(yaml);

        assertEquals(List.of(), loadProject().projectRequests());
    }

    @Test
    void restatingWhatAMoreAuthoritativeLayerSaysWidensNothing() throws Exception {
        Path user = write(dir.resolve("user.yaml"), """
                version: 1
                network: {allow: [api.example.com], mode: report, resolve: {pin.test: 203.0.113.7}}
                redaction: {action: block}
                limits: {timeout: 48h}
                env: {forward: [EDITOR], set: {PAGER: less}}
                jail: {new_session: false, share_timezone: false}
                mcp:
                  servers:
                    - {name: docs, url: "https://mcp.example.com/mcp", tools: {allow: [search, read]}}
                """);
        projectFile("""
                version: 1
                network: {allow: [api.example.com, other.example.com], mode: report, resolve: {pin.test: 203.0.113.7}}
                limits: {timeout: 24h}
                env: {forward: [EDITOR], set: {PAGER: less}}
                jail: {new_session: false, share_timezone: true}
                redaction: {action: redact}
                mcp:
                  servers:
                    - {name: docs2, url: "https://MCP.example.com:443/mcp", tools: {allow: ["*"]}}
                """);

        EffectivePolicy policy = load(
                PolicyStack.Input.file(PolicyLayer.USER, user),
                PolicyStack.Input.file(PolicyLayer.PROJECT, project.resolve(".agentjail.yaml")));

        // Only what goes beyond the user's policy: a new host, the time zone it kept out, redaction it made strict.
        assertEquals(
                List.of("network.allow[1]", "jail.share_timezone", "redaction.action"),
                policy.projectRequests().stream().map(ProjectRequest::key).toList());
        // The project's entry for the approved server narrows it: its "*" adds no tool.
        McpServer docs = policy.policy().mcp().servers().get(0);
        assertEquals(1, policy.policy().mcp().servers().size());
        assertEquals("docs", docs.name());
        assertTrue(docs.tools().permits("search"));
        assertFalse(docs.tools().permits("delete_repo"));
    }

    @ParameterizedTest
    @MethodSource("requests")
    void refusedUntilTrusted(String yaml, String key, String asks) throws Exception {
        Path file = projectFile(yaml);
        EffectivePolicy policy = loadProject();

        assertEquals(
                new ProjectRequest(file.toString(), 3, key, asks),
                policy.projectRequests().get(0));
        ProjectTrust.Result result = ProjectTrust.evaluate(policy, TrustedProjects.none());
        assertEquals(ProjectTrust.Status.UNTRUSTED, result.status());
        PolicyException e =
                assertThrows(PolicyException.class, () -> ProjectTrust.require(policy, TrustedProjects.none()));
        assertEquals(
                file + ":3: " + key + ": " + asks + ", which widens the jail; a project policy needs your trust"
                        + " for that; review and trust it with: agentjail policy trust --project " + project
                        + more(policy),
                e.getMessage());
    }

    private static String more(EffectivePolicy policy) {
        List<ProjectRequest> all = policy.projectRequests();
        return all.size() == 1
                ? ""
                : " (it widens the jail at "
                        + String.join(
                                ", ",
                                all.subList(1, all.size()).stream()
                                        .map(r -> r.where() + " " + r.key())
                                        .toList())
                        + " too)";
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
                        .contains("; you trusted this project policy, but " + file + " changed since; review and"
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
    void aPresetTheProjectExtendsWidensAsTheProjectFileWould() throws Exception {
        // claude-code carries credentials, allow and env entries: pulled in by a project file, they need its trust.
        Path file = projectFile("version: 1\nextends: [claude-code]\n");

        EffectivePolicy extended = loadProject();
        EffectivePolicy picked = load(
                PolicyStack.Input.preset(PolicyLayer.PROJECT, "claude-code"),
                PolicyStack.Input.file(PolicyLayer.PROJECT, file));

        assertFalse(extended.policy().credentials().isEmpty());
        assertTrue(
                extended.projectRequests().stream()
                        .anyMatch(r ->
                                r.file().equals("preset:claude-code") && r.key().equals("credentials[0]")),
                extended.projectRequests().toString());
        assertEquals(
                ProjectTrust.Status.UNTRUSTED,
                ProjectTrust.evaluate(extended, TrustedProjects.none()).status());
        // Trusting the project file covers the preset it extends.
        assertEquals(
                ProjectTrust.Status.TRUSTED,
                ProjectTrust.evaluate(extended, trusting(extended)).status());
        // The preset the command line picks is the user's choice: nothing to trust.
        assertEquals(List.of(), picked.projectRequests());
        assertEquals(
                List.of(file.toString()),
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
    void trustCoversOnlyTheEntriesTheUserWasShown() throws Exception {
        Path user = write(dir.resolve("user.yaml"), "version: 1\nnetwork:\n  mode: report\n");
        Path file = projectFile("version: 1\nnetwork:\n  mode: report\n  allow: [pypi.example.com]\n");
        PolicyStack.Input[] withReport = {
            PolicyStack.Input.file(PolicyLayer.USER, user), PolicyStack.Input.file(PolicyLayer.PROJECT, file)
        };
        EffectivePolicy shown = load(withReport);
        // The user's own policy says report mode: the project restating it is not shown, and not trusted.
        assertEquals(
                List.of("network.allow[0]"),
                shown.projectRequests().stream().map(ProjectRequest::key).toList());
        TrustedProjects trusted = trusting(shown);
        assertEquals(
                ProjectTrust.Status.TRUSTED,
                ProjectTrust.evaluate(load(withReport), trusted).status());

        // The user turns learning mode off: the project's unchanged line now widens the jail, and needs trust.
        Files.writeString(user, "version: 1\nnetwork:\n  mode: enforce\n");
        ProjectTrust.Result result = ProjectTrust.evaluate(load(withReport), trusted);

        assertEquals(ProjectTrust.Status.CHANGED, result.status());
        assertEquals(
                List.of("network.mode"),
                result.requests().stream().map(ProjectRequest::key).toList());
        assertTrue(result.reason().contains("was not among what you were shown"), result.reason());
    }

    @Test
    void aTrustRecordWithoutEntriesCoversNothing() throws Exception {
        projectFile("version: 1\nenv: {forward: [TOKEN]}\n");
        EffectivePolicy policy = loadProject();
        ProjectSnapshot snapshot = policy.projectSnapshot().orElseThrow();
        TrustedProjects legacy =
                TrustedProjects.none().with(new ProjectSnapshot(snapshot.root(), snapshot.files()), NOW);

        assertEquals(
                ProjectTrust.Status.CHANGED,
                ProjectTrust.evaluate(policy, legacy).status());
    }

    @Test
    void aRelativePathRestatedByTheProjectKeepsTheEarlierFilesMeaning() throws Exception {
        Path user = write(dir.resolve("config/user.yaml"), "version: 1\naudit:\n  log: logs/audit.jsonl\n");
        Path file = projectFile("version: 1\naudit:\n  log: logs/audit.jsonl\n");

        EffectivePolicy policy =
                load(PolicyStack.Input.file(PolicyLayer.USER, user), PolicyStack.Input.file(PolicyLayer.PROJECT, file));

        assertEquals(
                java.util.Optional.of(dir.resolve("config/logs/audit.jsonl")),
                policy.policy().audit().log());
        assertEquals(List.of(), policy.projectRequests());
    }

    @Test
    void aProjectFileThatExtendsTheUsersPolicyFileLeavesItInItsOwnLayer() throws Exception {
        Path strict = write(dir.resolve("strict.yaml"), "version: 1\nnetwork:\n  deny: [evil.example.com]\n");
        Path file = projectFile("version: 1\nextends: [" + strict + "]\n");

        EffectivePolicy policy = load(
                PolicyStack.Input.file(PolicyLayer.PROJECT, file),
                PolicyStack.Input.file(PolicyLayer.OVERRIDE, strict));

        assertTrue(
                policy.sources().stream()
                        .anyMatch(s ->
                                s.layer() == PolicyLayer.OVERRIDE && s.name().equals(strict.toString())),
                policy.sources().toString());
        assertEquals(List.of(), policy.projectRequests());
    }

    @Test
    void bindsAreJudgedAgainstTheDirectoryTheSessionStartsIn() throws Exception {
        Files.writeString(project.resolve(".env"), "TOKEN=x\n");
        Path sub = Files.createDirectories(project.resolve("sub"));
        Path file = write(
                sub.resolve(".agentjail.yaml"),
                "version: 1\nfilesystem:\n  read: [" + project.resolve(".env") + ", " + sub.resolve("tools") + "]\n");

        EffectivePolicy fromSub = PolicyStack.load(
                List.of(PolicyStack.Input.file(PolicyLayer.PROJECT, file)), home, java.util.Optional.of(sub));

        // The repository root's .env lies outside the subdirectory the user started the agent in.
        assertEquals(
                List.of("filesystem.read[0]"),
                fromSub.projectRequests().stream().map(ProjectRequest::key).toList());
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
    void readBindsInsideTheProjectNeedNoTrustUnlessALinkLeadsOutAndWriteBindsAlwaysDo() throws Exception {
        Files.createDirectories(project.resolve("tools"));
        Files.createDirectories(project.resolve("build"));
        Files.createSymbolicLink(project.resolve("keys"), home);
        projectFile("""
                version: 1
                filesystem:
                  read: [%s, %s]
                  write: [%s]
                """.formatted(project.resolve("tools"), project.resolve("keys"), project.resolve("build")));

        List<ProjectRequest> requests = loadProject().projectRequests();

        assertEquals(
                List.of("filesystem.read[1]", "filesystem.write[0]"),
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
                        + " widens the jail; the team policy forbids trusting project"
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
        assertEquals("trust.projects", e.key());
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
        Path file = projectFile("version: 1\nenv:\n  forward: [TOKEN]\n  deny: [AWS_KEY]\n");
        EffectivePolicy policy = loadProject();

        String trusted = policy.render(true, ProjectTrust.evaluate(policy, trusting(policy)));
        String untrusted = policy.render(true, ProjectTrust.evaluate(policy, TrustedProjects.none()));

        assertTrue(trusted.contains("    - TOKEN  # " + file + ":3 (trusted project entry)\n"), trusted);
        assertTrue(trusted.contains("    - AWS_KEY  # " + file + ":4\n"), trusted);
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
