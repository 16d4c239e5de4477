package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PolicyStackTest {
    @TempDir
    Path dir;

    private Path write(String name, String yaml) throws IOException {
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, yaml);
        return file;
    }

    private EffectivePolicy load(Object... layersAndFiles) throws PolicyException {
        List<PolicyStack.Input> inputs = new ArrayList<>();
        for (int i = 0; i < layersAndFiles.length; i += 2) {
            inputs.add(PolicyStack.Input.file((PolicyLayer) layersAndFiles[i], (Path) layersAndFiles[i + 1]));
        }
        return PolicyStack.load(inputs, dir.resolve("home"));
    }

    private static Target target(String authority) throws MalformedTargetException {
        Authorities.HostPort parsed = Authorities.split(authority);
        return new Target(parsed.host(), parsed.kind(), parsed.port().orElse(443));
    }

    private static Verdict verdict(Policy policy, String authority) throws MalformedTargetException {
        return policy.network().decide(target(authority), 443).verdict();
    }

    // --- the merge table: every pair of layers, every kind of key ---

    static Stream<Arguments> layerPairs() {
        return Stream.of(
                arguments(PolicyLayer.TEAM, PolicyLayer.USER),
                arguments(PolicyLayer.TEAM, PolicyLayer.PROJECT),
                arguments(PolicyLayer.USER, PolicyLayer.PROJECT),
                arguments(PolicyLayer.PROJECT, PolicyLayer.OVERRIDE),
                arguments(PolicyLayer.TEAM, PolicyLayer.OVERRIDE));
    }

    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("layerPairs")
    void listsAddUp(PolicyLayer upper, PolicyLayer lower) throws Exception {
        Path a = write("a.yaml", "version: 1\nnetwork: {allow: [a.test], deny: [x.a.test]}\n");
        Path b = write("b.yaml", "version: 1\nnetwork: {allow: [b.test, a.test], deny: [x.b.test]}\n");
        NetworkPolicy network = load(upper, a, lower, b).policy().network();
        assertEquals(
                List.of("a.test", "b.test"),
                network.allow().stream().map(HostPattern::text).toList());
        assertEquals(
                List.of("x.a.test", "x.b.test"),
                network.deny().stream().map(HostPattern::text).toList());
    }

    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("layerPairs")
    void scalarsOverride(PolicyLayer upper, PolicyLayer lower) throws Exception {
        Path a = write("a.yaml", "version: 1\nlimits: {timeout: 2h, processes: 100}\njail: {new_session: true}\n");
        Path b = write("b.yaml", "version: 1\nlimits: {timeout: 30m}\njail: {new_session: false}\n");
        Policy policy = load(upper, a, lower, b).policy();
        assertEquals(Duration.ofMinutes(30), policy.limits().timeout());
        assertEquals(100, policy.limits().processes(), "a key the lower layer does not set keeps its value");
        assertFalse(policy.jail().newSession());
    }

    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("layerPairs")
    void mappingsMergeKeyByKey(PolicyLayer upper, PolicyLayer lower) throws Exception {
        Path a = write("a.yaml", "version: 1\nenv: {set: {EDITOR: vi, PAGER: less}}\n");
        Path b = write("b.yaml", "version: 1\nenv: {set: {EDITOR: nano, LANG: C.UTF-8}}\n");
        Map<String, String> set = load(upper, a, lower, b).policy().env().set();
        assertEquals(Map.of("EDITOR", "nano", "PAGER", "less", "LANG", "C.UTF-8"), set);
    }

    @Test
    void laterDocumentsOfTheSameLayerStackToo() throws Exception {
        Path a = write("team/10-base.yaml", "version: 1\nnetwork: {allow: [a.test]}\nlimits: {timeout: 1h}\n");
        Path b = write("team/20-more.yaml", "version: 1\nnetwork: {allow: [b.test]}\nlimits: {timeout: 2h}\n");
        Policy policy = load(PolicyLayer.TEAM, a, PolicyLayer.TEAM, b).policy();
        assertEquals(2, policy.network().allow().size());
        assertEquals(Duration.ofHours(2), policy.limits().timeout());
    }

    // --- a lower layer cannot lift a deny ---

    private Path team() throws IOException {
        return write("team.yaml", """
                version: 1
                network:
                  deny: [evil.test, "*.paste.test"]
                env:
                  deny: [AWS_*, GITHUB_TOKEN]
                filesystem:
                  deny: ["~/.aws", /etc/secrets]
                locked: [network.mode, limits.timeout, credentials]
                """);
    }

    @Test
    void allowingATeamDeniedHostStillDenies() throws Exception {
        Path project = write("p.yaml", "version: 1\nnetwork: {allow: [evil.test, x.paste.test, ok.test]}\n");
        Policy policy =
                load(PolicyLayer.TEAM, team(), PolicyLayer.PROJECT, project).policy();
        assertEquals(Verdict.DENY, verdict(policy, "evil.test"));
        assertEquals(Verdict.DENY, verdict(policy, "x.paste.test"));
        assertEquals(Verdict.DENY, verdict(policy, "evil.test:8443"), "a deny without a port covers every port");
        assertEquals(Verdict.ALLOW, verdict(policy, "ok.test"));
    }

    @Test
    void reportModeAllowsTheUnlistedButNeverTheDenied() throws Exception {
        Path team = write("t.yaml", "version: 1\nnetwork: {deny: [evil.test]}\n");
        Path project = write("p.yaml", "version: 1\nnetwork: {mode: report, allow: [ok.test]}\n");
        Policy policy =
                load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, project).policy();
        assertEquals(Verdict.DENY, verdict(policy, "evil.test"));
        Decision unlisted = policy.network().decide(target("other.test"), 443);
        assertEquals(Verdict.ALLOW, unlisted.verdict());
        assertEquals(Reasons.WOULD_DENY, unlisted.reason());
        assertEquals(Reasons.NOT_ALLOWED, unlisted.rule());
    }

    @Test
    void tunnellingATeamDeniedHostStillDenies() throws Exception {
        Path project = write("p.yaml", "version: 1\nnetwork: {allow: [evil.test], tunnel: [evil.test]}\n");
        Policy policy =
                load(PolicyLayer.TEAM, team(), PolicyLayer.PROJECT, project).policy();
        assertEquals(Verdict.DENY, verdict(policy, "evil.test"));
    }

    static Stream<Arguments> liftAttempts() {
        return Stream.of(
                arguments(
                        "env:\n  forward: [AWS_SECRET_ACCESS_KEY]\n",
                        "p.yaml:3: env.forward[0]: 'AWS_SECRET_ACCESS_KEY' is denied by env.deny 'AWS_*' (team.yaml:5)"),
                arguments(
                        "env:\n  set: {GITHUB_TOKEN: x}\n",
                        "p.yaml:3: env.set.GITHUB_TOKEN: 'GITHUB_TOKEN' is denied by env.deny 'GITHUB_TOKEN'"
                                + " (team.yaml:5)"),
                arguments(
                        "filesystem:\n  read: [\"~/.aws/config\"]\n",
                        "p.yaml:3: filesystem.read[0]: 'HOME/.aws/config' is or overlaps 'HOME/.aws', denied by"
                                + " filesystem.deny (team.yaml:7)"),
                arguments(
                        "filesystem:\n  write: [\"~\"]\n",
                        "p.yaml:3: filesystem.write[0]: invalid path '~': '~' alone would expose the whole"
                                + " home directory"),
                arguments(
                        "filesystem:\n  read: [/etc]\n",
                        "p.yaml:3: filesystem.read[0]: '/etc' is or overlaps '/etc/secrets', denied by"
                                + " filesystem.deny (team.yaml:7)"),
                arguments(
                        "network:\n  mode: report\n",
                        "p.yaml:3: network.mode: locked by the team policy (team.yaml:8); the project policy cannot"
                                + " change it"),
                arguments(
                        "limits:\n  timeout: 48h\n",
                        "p.yaml:3: limits.timeout: locked by the team policy (team.yaml:8); the project policy"
                                + " cannot change it"),
                arguments(
                        "credentials:\n  - {env: ANY_KEY, hosts: [api.test], header: x-api-key}\n",
                        "p.yaml:2: credentials: locked by the team policy (team.yaml:8); the project policy cannot"
                                + " change it"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("liftAttempts")
    void aLowerLayerCannotLiftADenyOrChangeALockedKey(String section, String expected) throws Exception {
        Path team = team();
        Path project = write("p.yaml", "version: 1\n" + section);
        PolicyException e =
                assertThrows(PolicyException.class, () -> load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, project));
        String home = dir.resolve("home").toString();
        assertEquals(expected, e.getMessage().replace(home, "HOME").replace(dir + "/", ""));
    }

    @Test
    void aTeamDeniedEnvNameCannotBeACredentialEither() throws Exception {
        Path team = write("t.yaml", "version: 1\nenv: {deny: [AWS_*]}\nnetwork: {allow: [api.test]}\n");
        Path project = write(
                "p.yaml",
                "version: 1\ncredentials:\n  - {env: AWS_SECRET_ACCESS_KEY, hosts: [api.test], header: x-k}\n");
        PolicyException e =
                assertThrows(PolicyException.class, () -> load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, project));
        assertTrue(
                e.getMessage().endsWith("'AWS_SECRET_ACCESS_KEY' is denied by env.deny 'AWS_*' (" + team + ":2)"),
                e.getMessage());
    }

    @Test
    void theCommandLineLayerIsBoundByLocksToo() throws Exception {
        Path override = write("o.yaml", "version: 1\nlimits: {timeout: 1m}\n");
        PolicyException e = assertThrows(
                PolicyException.class, () -> load(PolicyLayer.TEAM, team(), PolicyLayer.OVERRIDE, override));
        assertTrue(e.getMessage().contains("locked by the team policy"), e.getMessage());
    }

    @Test
    void theLockingLayerItselfMaySetTheKey() throws Exception {
        Path more = write("team2.yaml", "version: 1\nlimits: {timeout: 3h}\n");
        EffectivePolicy effective = load(PolicyLayer.TEAM, team(), PolicyLayer.TEAM, more);
        assertEquals(Duration.ofHours(3), effective.policy().limits().timeout());
        assertEquals(effective.lockedBy("limits.timeout").orElseThrow(), dir.resolve("team.yaml") + ":8");
        assertEquals(effective.lockedBy("credentials").orElseThrow(), dir.resolve("team.yaml") + ":8");
        assertTrue(effective.lockedBy("limits.memory").isEmpty());
    }

    @Test
    void unknownLockPathsAreRefusedWithASuggestion() throws Exception {
        Path team = write("t.yaml", "version: 1\nlocked: [network.alow]\n");
        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.TEAM, team));
        assertEquals(
                team + ":2: locked[0]: unknown key 'alow' in network (did you mean 'network.allow'?)", e.getMessage());
    }

    // --- extends ---

    @Test
    void extendsPullsInFilesRelativeToTheExtendingFile() throws Exception {
        write("shared/base.yaml", "version: 1\nnetwork: {allow: [base.test]}\nlimits: {timeout: 5h}\n");
        Path project = write("p.yaml", "version: 1\nextends: [shared/base.yaml]\nlimits: {timeout: 1h}\n");
        Policy policy = load(PolicyLayer.PROJECT, project).policy();
        assertEquals(Verdict.ALLOW, verdict(policy, "base.test"));
        assertEquals(Duration.ofHours(1), policy.limits().timeout(), "the extending file overrides what it extends");
    }

    @Test
    void extendsCyclesAreRefusedNamingTheChain() throws Exception {
        write("a.yaml", "version: 1\nextends: [b.yaml]\n");
        write("b.yaml", "version: 1\nextends: [./a.yaml]\n");
        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, dir.resolve("a.yaml")));
        String real = dir.toRealPath().toString();
        assertEquals(
                dir.resolve("b.yaml") + ":2: extends: extends cycle: " + real + "/a.yaml -> " + real + "/b.yaml -> "
                        + real + "/a.yaml",
                e.getMessage());
    }

    @Test
    void aDiamondIsIncludedOnce() throws Exception {
        write(
                "base.yaml",
                "version: 1\ncredentials:\n  - {env: K, hosts: [api.test], header: x-k}\nnetwork: {allow: [api.test]}\n");
        write("left.yaml", "version: 1\nextends: [base.yaml]\n");
        write("right.yaml", "version: 1\nextends: [base.yaml]\n");
        Path top = write("top.yaml", "version: 1\nextends: [left.yaml, right.yaml]\n");
        // Included twice, the credential would be a duplicate rule.
        assertEquals(1, load(PolicyLayer.PROJECT, top).policy().credentials().size());
    }

    @Test
    void unknownPresetsAndMissingFilesAreRefused() throws Exception {
        Path missing = write("p.yaml", "version: 1\nextends: [nope.yaml]\n");
        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, missing));
        assertEquals(dir.resolve("nope.yaml") + ":0: -: cannot read: no such file or directory", e.getMessage());
        Path preset = write("q.yaml", "version: 1\nextends: [no-such-agent]\n");
        e = assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, preset));
        assertTrue(e.getMessage().startsWith(preset + ":2: extends: unknown preset 'no-such-agent'"), e.getMessage());
    }

    @Test
    void extendsNestingIsBounded() throws Exception {
        for (int i = 0; i < 12; i++) {
            write("c" + i + ".yaml", "version: 1\nextends: [c" + (i + 1) + ".yaml]\n");
        }
        write("c12.yaml", "version: 1\n");
        PolicyException e =
                assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, dir.resolve("c0.yaml")));
        assertTrue(e.getMessage().contains("extends nested deeper than 8 levels"), e.getMessage());
    }

    // --- origins ---

    @Test
    void everyEffectiveValueNamesItsFileAndLine() throws Exception {
        Path team = write("team.yaml", "version: 1\nnetwork:\n  allow: [a.test]\nlimits:\n  timeout: 2h\n");
        Path project = write("p.yaml", "version: 1\nnetwork:\n  allow:\n    - b.test\nlimits:\n  timeout: 30m\n");
        String shown =
                load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, project).render(true);
        assertTrue(shown.contains("    - a.test  # " + team + ":3\n"), shown);
        assertTrue(shown.contains("    - b.test  # " + project + ":4\n"), shown);
        assertTrue(shown.contains("  timeout: 30m  # " + project + ":6\n"), shown);
        assertFalse(shown.contains("2h"), shown);
    }

    @Test
    void errorsInTheMergedPolicyNameTheFileTheValueCameFrom() throws Exception {
        Path team = write("team.yaml", "version: 1\nenv:\n  forward: [MY_KEY]\n");
        Path project = write(
                "p.yaml",
                "version: 1\nnetwork: {allow: [api.test]}\ncredentials:\n  - {env: MY_KEY, hosts: [api.test], header: x-k}\n");
        PolicyException e =
                assertThrows(PolicyException.class, () -> load(PolicyLayer.TEAM, team, PolicyLayer.PROJECT, project));
        assertTrue(
                e.getMessage().startsWith(project + ":4: credentials[0].env: 'MY_KEY' is also in env.forward[0]"),
                e.getMessage());
    }

    @Test
    void theRenderedPolicyLoadsBackToTheSamePolicy() throws Exception {
        Path team = write("team.yaml", """
                version: 1
                network:
                  allow: [api.test, "*.cdn.test", "odd.test:8443"]
                  deny: [evil.cdn.test]
                  resolve: {api.test: [127.0.0.1, "::1"]}
                  ports: [443, 8443]
                env:
                  set: {EDITOR: "vi -n", PAGER: "less # not a comment", EMPTY_LOOKING: "null", NUM: "123"}
                  deny: [AWS_*]
                limits: {timeout: 2h, memory: 8g}
                jail: {hostname: box, new_session: false}
                redaction:
                  patterns:
                    - {name: itk, regex: 'itk_[A-Za-z0-9]{32}'}
                mcp:
                  servers:
                    - name: docs
                      url: https://mcp.test/mcp
                      tools: {allow: ["search*"], deny: ["delete_*"]}
                locked: [network]
                """);
        EffectivePolicy effective = load(PolicyLayer.TEAM, team);
        Policy again = PolicyLoader.parse(effective.render(false), "shown.yaml", dir, dir.resolve("home"));
        Policy original = effective.policy();
        assertEquals(original.network(), again.network());
        assertEquals(original.env(), again.env());
        assertEquals(original.limits(), again.limits());
        assertEquals(original.jail(), again.jail());
        assertEquals(original.mcp(), again.mcp());
        assertEquals(
                original.redaction().patterns().get(0).regex().pattern(),
                again.redaction().patterns().get(0).regex().pattern());
    }

    @Test
    void theHashCoversEveryDocument() throws Exception {
        Path a = write("a.yaml", "version: 1\n");
        Path b = write("b.yaml", "version: 1\nlimits: {timeout: 1h}\n");
        String both = load(PolicyLayer.TEAM, a, PolicyLayer.PROJECT, b).sha256();
        String one = load(PolicyLayer.PROJECT, b).sha256();
        assertFalse(both.equals(one));
        Files.writeString(b, "version: 1\nlimits: {timeout: 2h}\n");
        assertFalse(
                both.equals(load(PolicyLayer.TEAM, a, PolicyLayer.PROJECT, b).sha256()));
    }
}
