package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The machine policy: which files of its directory are read, in which order, that each must pass the ownership and
 * mode checks (the test's own user stands in for root), and how it sits above the team policy in the stack.
 */
class MachinePolicyTest {
    @TempDir
    Path dir;

    private Path etc;
    private RootOnlyPaths paths;
    private MachinePolicy machine;

    @BeforeEach
    void setUp() throws Exception {
        dir = dir.toRealPath();
        etc = dir.resolve("etc-agentjail");
        paths = new RootOnlyPaths((Integer) Files.getAttribute(dir, "unix:uid"), Optional.of(dir));
        machine = new MachinePolicy(etc, paths);
    }

    private Path write(String name, String yaml) throws Exception {
        Path file = etc.resolve(name);
        Files.createDirectories(file.getParent());
        Files.setPosixFilePermissions(file.getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(file, yaml);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        return file;
    }

    private List<String> names() throws Exception {
        return machine.inputs().stream()
                .map(i -> i.layer() + " " + etc.relativize(Path.of(i.name())))
                .toList();
    }

    private String refusal() {
        return assertThrows(MachinePolicyException.class, machine::inputs).getMessage();
    }

    private static String group(Path path) throws Exception {
        return Files.getAttribute(path, "posix:group").toString();
    }

    @Test
    void noDirectoryMeansNoMachinePolicy() throws Exception {
        assertEquals(List.of(), machine.inputs());
        Files.createDirectory(etc);
        assertEquals(List.of(), machine.inputs(), "an empty directory: no machine policy either");
    }

    @Test
    void thePolicyFileComesFirstThenTheDropInsInNameOrder() throws Exception {
        write("policy.yaml", "version: 1\n");
        write("policy.d/20-b.yml", "version: 1\n");
        write("policy.d/10-a.yaml", "version: 1\n");
        write("policy.d/README", "not a policy\n");
        write("policy.d/.tmp123-30-c.yaml", "half written\n");
        write("policy.d/10-a.yaml.dpkg-old", "an old one\n");
        write("config.yaml", "not read either\n");
        assertEquals(
                List.of("MACHINE policy.yaml", "MACHINE policy.d/10-a.yaml", "MACHINE policy.d/20-b.yml"), names());
    }

    @Test
    void theTextHandedOnIsTheFilesAndNamesTheFile() throws Exception {
        Path file = write("policy.yaml", "version: 1\nlimits: {timeout: 1h}\n");
        PolicyStack.Input input = machine.inputs().get(0);
        assertEquals(file, input.file());
        assertEquals(file.toString(), input.name());
        assertEquals("version: 1\nlimits: {timeout: 1h}\n", input.text());
        assertEquals(etc, input.baseDir());
    }

    @Test
    void aGroupWritableFileIsRefusedNamingIt() throws Exception {
        Path file = write("policy.yaml", "version: 1\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-r--"));
        assertEquals(
                file + ": writable by group '" + group(file) + "' (mode 0664); agentjail reads the machine policy only"
                        + " from root-owned files that only root can write",
                refusal());
    }

    @Test
    void aWorldWritableDropInIsRefused() throws Exception {
        Path file = write("policy.d/10-a.yaml", "version: 1\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--rw-"));
        assertEquals(file + ": writable by every user (mode 0646); " + RootOnlyPaths.WHY, refusal());
    }

    @Test
    void aWritableDirectoryIsRefusedEvenWithNoFileInIt() throws Exception {
        Files.createDirectories(etc);
        Files.setPosixFilePermissions(etc, PosixFilePermissions.fromString("rwxrwxr-x"));
        assertEquals(etc + ": writable by group '" + group(etc) + "' (mode 0775); " + RootOnlyPaths.WHY, refusal());
    }

    @Test
    void aStickyWorldWritableDropInDirectoryIsRefused() throws Exception {
        write("policy.yaml", "version: 1\n");
        Path dropIns = Files.createDirectories(etc.resolve("policy.d"));
        Files.setAttribute(dropIns, "unix:mode", 01777);
        assertEquals(dropIns + ": writable by every user (mode 1777); " + RootOnlyPaths.WHY, refusal());
    }

    @Test
    void aLinkedFileIsReadWhenItsTargetPassesTooAndNamedAsInTheDirectory() throws Exception {
        Path shared = Files.createDirectories(dir.resolve("srv/agentjail"));
        Path target = Files.writeString(shared.resolve("base.yaml"), "version: 1\nnetwork: {deny: [x.test]}\n");
        Files.createDirectories(etc);
        Path link = Files.createSymbolicLink(etc.resolve("policy.yaml"), target);
        assertEquals(List.of("MACHINE policy.yaml"), names());
        assertEquals(
                "version: 1\nnetwork: {deny: [x.test]}\n",
                machine.inputs().get(0).text());

        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxr-x"));
        assertEquals(
                link + ": " + shared + " is writable by group '" + group(shared) + "' (mode 0775); "
                        + RootOnlyPaths.WHY,
                refusal());
    }

    @Test
    void aLinkedDirectoryIsFollowedAndItsFilesNamedUnderTheMachineDirectory() throws Exception {
        Path real = Files.createDirectories(dir.resolve("srv/agentjail/policy.d"));
        Files.writeString(real.resolve("10-a.yaml"), "version: 1\n");
        Files.createSymbolicLink(etc, real.getParent());
        assertEquals(List.of("MACHINE policy.d/10-a.yaml"), names());
    }

    @Test
    void whatIsNotARegularFileIsRefusedBeforeItIsOpened() throws Exception {
        Path fake = Files.createDirectories(etc.resolve("policy.d/10-a.yaml"));
        assertEquals(fake + ": not a regular file", refusal());
    }

    @Test
    void theNumberOfDropInsIsBounded() throws Exception {
        for (int i = 0; i <= MachinePolicy.MAX_FILES; i++) {
            write("policy.d/%03d.yaml".formatted(i), "version: 1\n");
        }
        assertEquals(etc.resolve("policy.d") + ": more than " + MachinePolicy.MAX_FILES + " policy files", refusal());
    }

    @Test
    void aMalformedMachinePolicyIsAPolicyErrorNamingItsFileAndLine() throws Exception {
        Path file = write("policy.yaml", "version: 1\nlimits: {timeout: soon}\n");
        PolicyException e =
                assertThrows(PolicyException.class, () -> PolicyStack.load(machine.inputs(), dir.resolve("home")));
        assertTrue(e.getMessage().startsWith(file + ":2: limits.timeout: "), e.getMessage());
    }

    // --- in the stack ---

    private List<PolicyStack.Input> discover(Map<String, String> env) throws Exception {
        return PolicyDiscovery.discover(
                machine, env, dir.resolve("home"), new PolicyDiscovery.Request(Optional.empty(), List.of(), List.of()));
    }

    @Test
    void theTeamPolicyOfTheEnvironmentIsAddedAfterTheMachines() throws Exception {
        write("policy.yaml", "version: 1\n");
        Path team = Files.writeString(dir.resolve("team.yaml"), "version: 1\n");
        assertEquals(
                List.of("MACHINE " + etc.resolve("policy.yaml"), "TEAM " + team),
                discover(Map.of(PolicyDiscovery.TEAM_ENV, team.toString())).stream()
                        .map(i -> i.layer() + " " + i.file())
                        .toList());
    }

    @Test
    void theMachinesLocksBindTheTeamAndItsDeniesHold() throws Exception {
        Path machineFile = write("policy.yaml", """
                version: 1
                network:
                  deny: [blocked.test]
                limits:
                  timeout: 1h
                locked: [limits.timeout]
                """);
        Path team = Files.writeString(dir.resolve("team.yaml"), """
                version: 1
                network:
                  allow: [blocked.test, ok.test]
                """);
        EffectivePolicy effective =
                PolicyStack.load(discover(Map.of(PolicyDiscovery.TEAM_ENV, team.toString())), dir.resolve("home"));
        assertEquals(Duration.ofHours(1), effective.policy().limits().timeout());
        assertEquals(
                Verdict.DENY,
                effective
                        .policy()
                        .network()
                        .decide(new Target("blocked.test", HostKind.DNS, 443), 443)
                        .verdict());

        Files.writeString(team, "version: 1\nlimits:\n  timeout: 8h\n");
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> PolicyStack.load(
                        discover(Map.of(PolicyDiscovery.TEAM_ENV, team.toString())), dir.resolve("home")));
        assertEquals(
                team + ":3: limits.timeout: locked by the machine policy (" + machineFile
                        + ":6); the team policy cannot change it",
                e.getMessage());
    }

    @Test
    void otherMachineFilesMaySetWhatTheMachineLocked() throws Exception {
        write("policy.yaml", "version: 1\nlimits: {timeout: 1h}\nlocked: [limits.timeout]\n");
        write("policy.d/10-longer.yaml", "version: 1\nlimits: {timeout: 2h}\n");
        assertEquals(
                Duration.ofHours(2),
                PolicyStack.load(machine.inputs(), dir.resolve("home"))
                        .policy()
                        .limits()
                        .timeout());
    }

    @Test
    void aTeamPolicyNamingTheMachinesOwnFileMergesItOnce() throws Exception {
        Path file = write("policy.yaml", "version: 1\nlimits: {timeout: 1h}\nlocked: [limits]\n");
        EffectivePolicy effective =
                PolicyStack.load(discover(Map.of(PolicyDiscovery.TEAM_ENV, file.toString())), dir.resolve("home"));
        assertEquals(
                List.of(PolicyLayer.MACHINE),
                effective.sources().stream().map(PolicySource::layer).toList());
    }

    @Test
    void theMachinePolicyExtendsPresetsButNoFiles() throws Exception {
        write("base.yaml", "version: 1\n");
        Path file = write("policy.yaml", "version: 1\nextends: [claude-code, base.yaml]\n");
        PolicyException e =
                assertThrows(PolicyException.class, () -> PolicyStack.load(machine.inputs(), dir.resolve("home")));
        assertEquals(
                file + ":2: extends: the machine policy extends presets only, not files; put 'base.yaml' in the"
                        + " policy.d directory instead",
                e.getMessage());
        Files.writeString(file, "version: 1\nextends: [claude-code]\n");
        assertEquals(
                List.of("preset:claude-code", file.toString()),
                PolicyStack.load(machine.inputs(), dir.resolve("home")).sources().stream()
                        .map(PolicySource::name)
                        .toList());
    }

    @Test
    void theStackReadsNoMachineFileItself() {
        assertThrows(
                IllegalArgumentException.class,
                () -> PolicyStack.load(
                        List.of(PolicyStack.Input.file(PolicyLayer.MACHINE, etc.resolve("policy.yaml"))),
                        dir.resolve("home")));
    }

    @Test
    void showWithOriginsNamesTheMachineFile() throws Exception {
        Path file = write("policy.yaml", "version: 1\nnetwork:\n  deny: [blocked.test]\nlocked: [network.mode]\n");
        String shown = PolicyStack.load(machine.inputs(), dir.resolve("home")).render(true);
        assertTrue(shown.startsWith("# effective policy, merged from:\n#   machine policy: " + file + "\n"), shown);
        assertTrue(shown.contains("    - blocked.test  # " + file + ":3\n"), shown);
        assertTrue(shown.contains("  - network.mode  # " + file + ":4\n"), shown);
    }
}
