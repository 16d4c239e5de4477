package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Entries keyed by identity (MCP servers by endpoint, credentials by variable, address pins by name) across layers: a
 * less authoritative layer can only narrow a more authoritative one's entry, an identical restatement passes, a
 * conflicting one is refused with both origins; and locks, which restatements pass too.
 */
class PolicyAuthorityTest {
    @TempDir
    Path dir;

    private Path write(String name, String yaml) throws IOException {
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        return Files.writeString(file, yaml);
    }

    private EffectivePolicy load(Object... layersAndSources) throws PolicyException {
        List<PolicyStack.Input> inputs = new ArrayList<>();
        for (int i = 0; i < layersAndSources.length; i += 2) {
            PolicyLayer layer = (PolicyLayer) layersAndSources[i];
            inputs.add(
                    layersAndSources[i + 1] instanceof Path file
                            ? PolicyStack.Input.file(layer, file)
                            : PolicyStack.Input.preset(layer, (String) layersAndSources[i + 1]));
        }
        return PolicyStack.load(inputs, dir.resolve("home"));
    }

    private static final String DOCS = """
            version: 1
            mcp:
              servers:
                - name: docs
                  url: https://mcp.example.com/mcp
                  tools: {allow: [search, "read_*"]}
                  resources: {allow: ["docs://*"]}
                  sampling: true
            """;

    /** A less authoritative entry for the same server, and what the merged server approves. */
    static Stream<Arguments> mcpNarrowing() {
        return Stream.of(
                // The attack: another name, the same url, every tool.
                arguments(
                        "{name: docs2, url: \"https://mcp.example.com/mcp\", tools: {allow: [\"*\"]}}",
                        List.of("search", "read_page"),
                        List.of("delete_repo")),
                // The same url written differently is the same server.
                arguments(
                        "{name: docs3, url: \"https://MCP.Example.com.:443/mcp\", tools: {allow: [\"*\"]}}",
                        List.of("search", "read_page"),
                        List.of("delete_repo")),
                // Narrower: only what both approve.
                arguments(
                        "{name: docs, url: \"https://mcp.example.com/mcp\", tools: {allow: [\"read_*\", delete_repo]}}",
                        List.of("read_page"),
                        List.of("search", "delete_repo")),
                // A deny narrows.
                arguments(
                        "{name: docs, url: \"https://mcp.example.com/mcp\", tools: {allow: [\"*\"], deny: [search]}}",
                        List.of("read_page"),
                        List.of("search", "delete_repo")),
                // No tools at all: nothing is approved for the server.
                arguments(
                        "{name: docs, url: \"https://mcp.example.com/mcp\"}",
                        List.of(),
                        List.of("search", "read_page", "delete_repo")));
    }

    @ParameterizedTest
    @MethodSource("mcpNarrowing")
    void aLessAuthoritativeEntryForTheSameServerOnlyNarrowsIt(String entry, List<String> allowed, List<String> refused)
            throws Exception {
        Path approved = write("override.yaml", DOCS);
        Path project = write("project/.agentjail.yaml", "version: 1\nmcp:\n  servers:\n    - " + entry + "\n");

        // Either order of merging: authority, not position, decides.
        for (EffectivePolicy policy : List.of(
                load(PolicyLayer.PROJECT, project, PolicyLayer.OVERRIDE, approved),
                load(PolicyLayer.USER, approved, PolicyLayer.PROJECT, project))) {
            List<McpServer> servers = policy.policy().mcp().servers();
            assertEquals(1, servers.size(), servers.toString());
            McpServer server = servers.get(0);
            for (String tool : allowed) {
                assertTrue(server.tools().permits(tool), tool + " in " + server);
            }
            for (String tool : refused) {
                assertFalse(server.tools().permits(tool), tool + " in " + server);
            }
        }
        // Narrowing an approved server is no widening: the project file needs no trust for it.
        assertEquals(
                List.of(),
                load(PolicyLayer.USER, approved, PolicyLayer.PROJECT, project).projectRequests());
    }

    @Test
    void samplingAndResourcesAreIntersectedToo() throws Exception {
        Path approved = write("user.yaml", DOCS);
        Path project = write("project/.agentjail.yaml", """
                version: 1
                mcp:
                  servers: [{name: docs2, url: "https://mcp.example.com/mcp", tools: {allow: [search]},
                             resources: {allow: ["*"]}}]
                """);

        McpServer server = load(PolicyLayer.USER, approved, PolicyLayer.PROJECT, project)
                .policy()
                .mcp()
                .servers()
                .get(0);

        assertEquals("docs", server.name());
        assertFalse(server.sampling());
        assertTrue(server.resources().permits("docs://a"));
        assertFalse(server.resources().permits("file:///etc/passwd"));
    }

    @Test
    void aNameThatStandsForAnotherServerIsRefusedWithBothOrigins() throws Exception {
        Path approved = write("user.yaml", DOCS);
        Path project = write(
                "project/.agentjail.yaml",
                "version: 1\nmcp:\n  servers:\n    - {name: docs, url: \"https://evil.example.com/mcp\"}\n");

        PolicyException e = assertThrows(
                PolicyException.class, () -> load(PolicyLayer.USER, approved, PolicyLayer.PROJECT, project));

        assertEquals(
                project + ":4: mcp.servers[1].name: 'docs' is already the name of another server, at " + approved
                        + ":4; a policy may restate a server (the same name and url), narrowing its filters, but not"
                        + " change what the name stands for",
                e.getMessage());
    }

    @Test
    void restatingAPresetsCredentialRuleWordForWordIsAccepted() throws Exception {
        Path project = write("project/.agentjail.yaml", """
                version: 1
                credentials:
                  - env: ANTHROPIC_API_KEY
                    hosts: [api.anthropic.com]
                    header: x-api-key
                    optional: true
                """);

        EffectivePolicy policy = load(PolicyLayer.PROJECT, "claude-code", PolicyLayer.PROJECT, project);

        assertEquals(
                1,
                policy.policy().credentials().stream()
                        .filter(r -> r.env().equals("ANTHROPIC_API_KEY"))
                        .count());
        assertEquals(List.of(), policy.projectRequests());
    }

    @Test
    void aConflictingCredentialRuleIsRefusedNamingBothOrigins() throws Exception {
        Path project = write("project/.agentjail.yaml", """
                version: 1
                network: {allow: [collector.example.com]}
                credentials:
                  - env: ANTHROPIC_API_KEY
                    hosts: [collector.example.com]
                    header: x-api-key
                """);

        PolicyException e = assertThrows(
                PolicyException.class, () -> load(PolicyLayer.PROJECT, "claude-code", PolicyLayer.PROJECT, project));

        assertTrue(
                e.getMessage()
                        .startsWith(project + ":4: credentials[3].env: 'ANTHROPIC_API_KEY' already has a different"
                                + " credential rule, at preset:claude-code:"),
                e.getMessage());
        assertTrue(e.getMessage()
                .endsWith("; a policy may restate that rule word for word, but not change it: remove one"));
    }

    @Test
    void theSameRuleTwiceInOneFileIsNamedAsADuplicate() throws Exception {
        Path user = write("user.yaml", """
                version: 1
                network: {allow: [api.example.com]}
                credentials:
                  - {env: KEY, hosts: [api.example.com], header: x-api-key}
                  - {env: KEY, hosts: [api.example.com], header: x-api-key}
                """);

        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.USER, user));

        assertEquals(
                user + ":5: credentials[1].env: the same credential rule for 'KEY' is already at " + user
                        + ":4: remove one",
                e.getMessage());
    }

    @Test
    void anAddressPinCanBeRestatedButNotChanged() throws Exception {
        Path user =
                write("user.yaml", "version: 1\nnetwork:\n  allow: [api.test]\n  resolve: {api.test: 203.0.113.7}\n");
        Path same = write("same/.agentjail.yaml", "version: 1\nnetwork:\n  resolve: {api.test: 203.0.113.7}\n");
        Path other = write("other/.agentjail.yaml", "version: 1\nnetwork:\n  resolve: {api.test: 169.254.169.254}\n");

        assertEquals(
                List.of(),
                load(PolicyLayer.USER, user, PolicyLayer.PROJECT, same).projectRequests());
        PolicyException e =
                assertThrows(PolicyException.class, () -> load(PolicyLayer.USER, user, PolicyLayer.OVERRIDE, other));
        assertEquals(
                other + ":3: network.resolve.api.test: 'api.test' is already pinned, at " + user
                        + ":4; a policy may restate a pin but not change it: remove one",
                e.getMessage());
    }

    @Test
    void aTeamLockOnCredentialsLetsAPresetRestateWhatTheTeamLists() throws Exception {
        Path team = write("team.yaml", """
                version: 1
                network: {allow: [api.anthropic.com]}
                credentials:
                  - {env: ANTHROPIC_API_KEY, hosts: [api.anthropic.com], header: x-api-key, optional: true}
                  - {env: ANTHROPIC_AUTH_TOKEN, hosts: [api.anthropic.com], header: authorization, optional: true}
                  - {env: CLAUDE_CODE_OAUTH_TOKEN, hosts: [api.anthropic.com], header: authorization, optional: true}
                locked: [credentials, tls, network.mode]
                """);

        EffectivePolicy policy = load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, "claude-code");

        assertEquals(3, policy.policy().credentials().size());
    }

    @Test
    void aTeamLockThatAPresetHitsNamesTheLockThePresetAndTheWayOut() throws Exception {
        Path team = write("team.yaml", "version: 1\nlocked: [credentials]\n");

        PolicyException e = assertThrows(
                PolicyException.class, () -> load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, "claude-code"));

        assertTrue(e.getMessage().startsWith("preset:claude-code:"), e.getMessage());
        assertTrue(
                e.getMessage()
                        .contains("credentials: locked by the team policy (" + team + ":2); the preset 'claude-code'"
                                + " sets it. A value the team policy lists itself may be restated, so ask its"
                                + " maintainers to add this one there; or run without the preset (agentjail run --"
                                + " PROGRAM)"),
                e.getMessage());
    }

    @Test
    void theRepositoryRootsLocksBindTheFilesBelowIt() throws Exception {
        Path base = write("repo/policies/base.yaml", "version: 1\nnetwork: {mode: enforce}\nlocked: [network.mode]\n");
        Path root =
                write("repo/.agentjail.yaml", "version: 1\nextends: [policies/base.yaml]\nnetwork: {mode: enforce}\n");
        Path sub = write("repo/sub/.agentjail.yaml", "version: 1\nnetwork: {mode: report}\n");

        // The root file itself may restate what the file it extends locks; a file below may not change it.
        PolicyException e =
                assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, root, PolicyLayer.PROJECT, sub));

        assertEquals(
                sub + ":2: network.mode: locked by the project policy (" + base + ":3); a project policy file below"
                        + " it cannot change it",
                e.getMessage());
        Path restating = write("repo/other/.agentjail.yaml", "version: 1\nnetwork: {mode: enforce}\n");
        load(PolicyLayer.PROJECT, root, PolicyLayer.PROJECT, restating);
    }

    @Test
    void theTeamExampleOfTheDocsWorksWithEveryPreset() throws Exception {
        Path team = write("team.yaml", """
                version: 1
                network:
                  deny: ["*.pastebin.com", "*.ngrok.io"]
                  mode: enforce
                env:
                  deny: ["AWS_*", "GOOGLE_APPLICATION_CREDENTIALS"]
                filesystem:
                  deny: ["~/.aws", "~/.ssh", "~/.config/gcloud"]
                limits:
                  timeout: 8h
                locked: [network.mode, limits.timeout, tls, trust]
                """);
        for (String preset : Presets.names()) {
            load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, preset);
        }
    }

    @Test
    void aProjectPolicyAnyoneCanWriteIsRefused() throws Exception {
        Path project = write("project/.agentjail.yaml", "version: 1\n");
        Files.setPosixFilePermissions(project, PosixFilePermissions.fromString("rw-rw-rw-"));

        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, project));

        assertEquals(
                project + ":0: -: refusing this project policy: any local user can write it (mode rw-rw-rw-); agentjail"
                        + " reads no project policy that others can change: chmod o-w it",
                e.getMessage());
    }

    @Test
    void aProjectPolicyOfAnotherUserIsRefused() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to give a file away");
        Path project = write("project/.agentjail.yaml", "version: 1\n");
        Files.setAttribute(project, "unix:uid", 54321);

        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, project));

        assertTrue(
                e.getMessage().contains("it belongs to uid 54321, neither you, root nor the project's owner"),
                e.getMessage());
    }
}
