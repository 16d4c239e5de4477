package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyDiscoveryTest {
    @TempDir
    Path dir;

    private List<String> found(Map<String, String> env, PolicyDiscovery.Request request) throws Exception {
        return PolicyDiscovery.discover(env, dir.resolve("home"), request).stream()
                .map(i -> i.layer() + " " + (i.file() != null ? dir.relativize(i.file()) : "preset:" + i.preset()))
                .toList();
    }

    private static PolicyDiscovery.Request request(Path project, List<String> presets, List<Path> overrides) {
        return new PolicyDiscovery.Request(Optional.ofNullable(project), presets, overrides);
    }

    @Test
    void everyLayerInOrder() throws Exception {
        Path team = Files.createDirectories(dir.resolve("team"));
        Files.writeString(team.resolve("20-extra.yml"), "version: 1\n");
        Files.writeString(team.resolve("10-base.yaml"), "version: 1\n");
        Files.writeString(team.resolve("README.md"), "not a policy\n");
        Path config = Files.createDirectories(dir.resolve("xdg/agentjail"));
        Files.writeString(config.resolve("policy.yaml"), "version: 1\n");
        Path project = Files.createDirectories(dir.resolve("repo/sub"));
        Files.createDirectories(dir.resolve("repo/.git/objects"));
        Files.writeString(dir.resolve("repo/.git/HEAD"), "ref: refs/heads/main\n");
        Files.writeString(dir.resolve("repo/.agentjail.yaml"), "version: 1\n");
        Path override = Files.writeString(dir.resolve("o.yaml"), "version: 1\n");

        List<String> found = found(
                Map.of(
                        "AGENTJAIL_TEAM_POLICY",
                        team.toString(),
                        "XDG_CONFIG_HOME",
                        dir.resolve("xdg").toString()),
                request(project, List.of("claude-code"), List.of(override)));

        assertEquals(
                List.of(
                        "TEAM team/10-base.yaml",
                        "TEAM team/20-extra.yml",
                        "USER xdg/agentjail/policy.yaml",
                        "PROJECT preset:claude-code",
                        "PROJECT "
                                + dir.relativize(
                                        dir.resolve("repo/.agentjail.yaml").toRealPath()),
                        "OVERRIDE o.yaml"),
                found);
    }

    @Test
    void theUserConfigCanNameTheTeamPolicyAndTheEnvironmentWins() throws Exception {
        Path config = Files.createDirectories(dir.resolve("home/.config/agentjail"));
        Files.writeString(dir.resolve("team-a.yaml"), "version: 1\n");
        Files.writeString(dir.resolve("team-b.yaml"), "version: 1\n");
        Files.writeString(config.resolve("config.yaml"), "team_policy: ../../../team-a.yaml\n");
        assertEquals(List.of("TEAM team-a.yaml"), found(Map.of(), request(null, List.of(), List.of())));
        assertEquals(
                List.of("TEAM team-b.yaml"),
                found(
                        Map.of(
                                "AGENTJAIL_TEAM_POLICY",
                                dir.resolve("team-b.yaml").toString()),
                        request(null, List.of(), List.of())));
    }

    @Test
    void aNamedTeamPolicyThatIsMissingIsAnErrorNotASilentSkip() {
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> found(
                        Map.of("AGENTJAIL_TEAM_POLICY", dir.resolve("gone").toString()),
                        request(null, List.of(), List.of())));
        assertEquals(
                dir.resolve("gone") + ":0: -: cannot read the team policy: no such file or directory", e.getMessage());
    }

    @Test
    void aBadUserConfigNamesFileLineAndKey() throws Exception {
        Path config = Files.createDirectories(dir.resolve("home/.config/agentjail"));
        Files.writeString(config.resolve("config.yaml"), "team_polcy: /x\n");
        PolicyException e =
                assertThrows(PolicyException.class, () -> found(Map.of(), request(null, List.of(), List.of())));
        assertEquals(
                config.resolve("config.yaml")
                        + ":1: team_polcy: unknown key 'team_polcy' (did you mean 'team_policy'?)",
                e.getMessage());
    }

    @Test
    void nothingFoundMeansNoInputs() throws Exception {
        assertEquals(
                List.of(), found(Map.of(), request(Files.createDirectories(dir.resolve("p")), List.of(), List.of())));
    }
}
