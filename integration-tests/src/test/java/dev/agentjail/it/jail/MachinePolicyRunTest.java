package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.cli.ExitCodes;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.ProxyReasons;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The machine policy of /etc/agentjail through the real CLI, as root and as an ordinary user: each run mounts a test
 * directory over /etc/agentjail in a private mount namespace (the host's /etc/agentjail is never written; an empty
 * one is made for the mount only where there is none, and removed afterwards). The user cannot get around it (team
 * variable, XDG_CONFIG_HOME, user, project and --policy files, --timeout), {@code policy show --origin} names its file,
 * and a file or directory someone other than root can write stops every command with exit code 3.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MachinePolicyRunTest {
    static final Path ETC = Path.of("/etc/agentjail");
    static final String USER = UnprivilegedUserTest.USER;

    /** The machine policy most tests use; line 6 holds the locks. */
    static final String POLICY = """
            version: 1
            network:
              deny: [blocked.test]
            limits:
              timeout: 1h
            locked: [limits.timeout, network.mode]
            """;

    static final String WHY = "agentjail reads the machine policy only from root-owned files that only root can write";

    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().bindAddress("127.0.0.1").dynamicPort())
            .build();

    @TempDir
    static Path shared;

    static Path jar;
    static boolean madeEtc;

    @TempDir
    Path dir;

    Path machine;

    @BeforeAll
    static void userJarAndMountPoint() throws IOException {
        Prerequisites.require(
                AgentjailRun.isRoot(), "root, to mount a machine policy over /etc/agentjail in a mount namespace");
        Prerequisites.require(Path.of("/usr/bin/unshare"));
        RootLaunchTest.ensureUser(USER);
        jar = UnprivilegedUserTest.jarFor(USER, shared);
        if (!Files.exists(ETC, LinkOption.NOFOLLOW_LINKS)) {
            Files.createDirectory(ETC);
            Files.setPosixFilePermissions(ETC, PosixFilePermissions.fromString("rwxr-xr-x"));
            madeEtc = true;
        }
    }

    @AfterAll
    static void removeTheMountPoint() throws IOException {
        if (!madeEtc) {
            return;
        }
        try (Stream<Path> entries = Files.list(ETC)) {
            if (entries.findAny().isEmpty()) {
                Files.delete(ETC);
            }
        }
    }

    @BeforeEach
    void setUp() throws IOException {
        machine = Files.createDirectory(dir.resolve("machine"));
        Files.setPosixFilePermissions(machine, PosixFilePermissions.fromString("rwxr-xr-x"));
        upstream.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("ok")));
    }

    /** Writes a machine policy file (root's, mode 0644) under the directory mounted as /etc/agentjail. */
    private Path machineFile(String name, String yaml) throws IOException {
        Path file = machine.resolve(name);
        Files.createDirectories(file.getParent());
        Files.setPosixFilePermissions(file.getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(file, yaml);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        return file;
    }

    /** Writes a file that belongs to the user, as the user's own team or user policy would. */
    private Path userFile(String name, String yaml) throws IOException {
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, yaml);
        UserPrincipal owner = lookup().lookupPrincipalByName(USER);
        for (Path p = file; !p.equals(dir); p = p.getParent()) {
            Files.setOwner(p, owner);
        }
        return file;
    }

    private UserPrincipalLookupService lookup() {
        return dir.getFileSystem().getUserPrincipalLookupService();
    }

    /** The argv prefix that runs the rest of its arguments with {@code machine} mounted over /etc/agentjail. */
    private List<String> mounted() {
        return List.of(
                "/usr/bin/unshare",
                "--mount",
                "--propagation",
                "private",
                "/bin/sh",
                "-c",
                "mount --bind \"$1\" " + ETC + " && shift && exec \"$@\"",
                "sh",
                machine.toString());
    }

    private AgentjailRun asUser() throws IOException {
        return UnprivilegedUserTest.runAs(USER, dir, jar).through(mounted());
    }

    private AgentjailRun asRoot() {
        return AgentjailRun.in(dir).through(mounted());
    }

    private static void assertRefusedWith(int exitCode, String message, Command.Result r) {
        assertEquals(exitCode, r.exitCode(), r::describe);
        assertTrue(r.stderr().contains(message), () -> "no '" + message + "' on stderr: " + r.describe());
    }

    @Test
    void noLayerTheUserControlsLiftsAMachineDeny() throws IOException {
        AgentjailRun.requireBwrap();
        int port = upstream.getPort();
        machineFile("policy.yaml", POLICY);
        String allowBlocked = "version: 1\nnetwork:\n  allow: [\"blocked.test:%d\"]\n".formatted(port);
        AgentjailRun run = asUser().env(
                        "AGENTJAIL_TEAM_POLICY",
                        userFile("team/base.yaml", allowBlocked).toString())
                .env(
                        "XDG_CONFIG_HOME",
                        userFile("xdg/agentjail/policy.yaml", allowBlocked)
                                .getParent()
                                .getParent()
                                .toString())
                .policy("""
                        version: 1
                        network:
                          allow: ["ok.test:%1$d", "blocked.test:%1$d"]
                          resolve: {ok.test: 127.0.0.1, blocked.test: 127.0.0.1}
                        """.formatted(port));
        Path project = run.project().resolve(".agentjail.yaml");
        Files.writeString(project, allowBlocked);
        Files.setOwner(project, lookup().lookupPrincipalByName(USER));

        AgentjailRun.Outcome o = run.bash("""
                echo "uid=$(id -u)"
                echo "ok=$(curl -q -sS -m 20 -o /dev/null -w '%%{http_code}' http://ok.test:%1$d/a)"
                curl -q -sS -m 20 -D /tmp/h -o /dev/null http://blocked.test:%1$d/b
                echo "blocked=$(head -1 /tmp/h | cut -d' ' -f2)"
                echo "reason=$(grep -i '^%2$s:' /tmp/h | cut -d: -f2- | tr -d ' \\r')"
                """.formatted(port, ProxyReasons.HEADER));

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals(
                        String.valueOf(RootLaunchTest.ensureUser(USER)), o.probe("uid"), "the user's own session"),
                () -> assertEquals("200", o.probe("ok"), o::describe),
                () -> assertEquals("403", o.probe("blocked"), o::describe),
                () -> assertEquals(Reasons.DENIED_BY_RULE, o.probe("reason"), o::describe),
                () -> assertEquals(1, upstream.getAllServeEvents().size(), "only the allowed request went out"));
    }

    @Test
    void noLayerTheUserControlsChangesAMachineLock() throws IOException {
        machineFile("policy.yaml", POLICY);
        String lock = "locked by the machine policy (" + ETC.resolve("policy.yaml") + ":6)";
        String longer = "version: 1\nlimits:\n  timeout: 8h\n";
        String report = "version: 1\nnetwork:\n  mode: report\n";

        AgentjailRun team = asUser().env(
                        "AGENTJAIL_TEAM_POLICY",
                        userFile("team/base.yaml", longer).toString());
        assertRefusedWith(
                ExitCodes.USAGE,
                "limits.timeout: " + lock,
                team.cli("policy", "check", "--project", team.project().toString()));

        Path xdg = userFile("xdg/agentjail/policy.yaml", report).getParent().getParent();
        AgentjailRun user = asUser().env("XDG_CONFIG_HOME", xdg.toString());
        assertRefusedWith(
                ExitCodes.USAGE,
                "network.mode: " + lock,
                user.cli("policy", "show", "--project", user.project().toString()));

        AgentjailRun project = asUser();
        Path file = project.project().resolve(".agentjail.yaml");
        Files.writeString(file, longer);
        Files.setOwner(file, lookup().lookupPrincipalByName(USER));
        assertRefusedWith(
                ExitCodes.USAGE,
                "limits.timeout: " + lock,
                project.cli("policy", "check", "--project", project.project().toString()));
        Files.delete(file);

        Path override = userFile("override.yaml", report);
        AgentjailRun option = asUser();
        assertRefusedWith(
                ExitCodes.USAGE,
                "network.mode: " + lock,
                option.cli(
                        "policy", "check", "--project", option.project().toString(), "--policy", override.toString()));
        AgentjailRun.Outcome timeout = option.timeout("5h").run("true");
        assertRefusedWith(
                ExitCodes.USAGE, "limits.timeout is locked by " + ETC.resolve("policy.yaml") + ":6", timeout.result());
    }

    @Test
    void showWithOriginNamesTheMachineFilesWhateverTheUsersEnvironment() throws IOException {
        machineFile("policy.yaml", POLICY);
        machineFile("policy.d/10-more.yaml", "version: 1\nnetwork:\n  deny: [also-blocked.test]\n");
        Path emptyConfig = Files.createDirectories(dir.resolve("empty-xdg"));
        AgentjailRun run = asUser().env("XDG_CONFIG_HOME", emptyConfig.toString());

        Command.Result r =
                run.cli("policy", "show", "--origin", "--project", run.project().toString());

        assertEquals(0, r.exitCode(), r::describe);
        String file = ETC.resolve("policy.yaml").toString();
        assertAll(
                () -> assertTrue(
                        r.out()
                                .startsWith("# effective policy, merged from:\n#   machine policy: " + file
                                        + "\n#   machine policy: " + ETC.resolve("policy.d/10-more.yaml") + "\n"),
                        r::describe),
                () -> assertTrue(r.out().contains("    - blocked.test  # " + file + ":3\n"), r::describe),
                () -> assertTrue(
                        r.out().contains("    - also-blocked.test  # " + ETC.resolve("policy.d/10-more.yaml") + ":3\n"),
                        r::describe),
                () -> assertTrue(r.out().contains("  timeout: 1h  # " + file + ":5\n"), r::describe),
                () -> assertTrue(r.out().contains("  - limits.timeout  # " + file + ":6\n"), r::describe));
    }

    @Test
    void aGroupWritableFileStopsEveryCommandWithExit3() throws IOException {
        Path file = machineFile("policy.yaml", POLICY);
        GroupPrincipal group = lookup().lookupPrincipalByGroupName(USER);
        Files.setAttribute(file, "posix:group", group, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-r--"));
        String line =
                "agentjail: " + ETC.resolve("policy.yaml") + ": writable by group '" + USER + "' (mode 0664); " + WHY;

        AgentjailRun user = asUser();
        assertOnlyLine(
                line, user.cli("policy", "show", "--project", user.project().toString()));
        AgentjailRun.Outcome run = user.run("true");
        assertOnlyLine(line, run.result());
        assertTrue(run.probes().isEmpty(), run::describe);
        AgentjailRun root = asRoot();
        assertOnlyLine(
                line, root.cli("policy", "check", "--project", root.project().toString()));
        Path proxyPolicy = Files.writeString(dir.resolve("proxy.yaml"), "version: 1\n");
        assertOnlyLine(
                line,
                root.cli(
                        "proxy",
                        "--policy",
                        proxyPolicy.toString(),
                        "--listen",
                        "127.0.0.1:0",
                        "--audit-log",
                        dir.resolve("proxy-audit.jsonl").toString()));
    }

    @Test
    void aStickyWorldWritableDropInDirectoryStopsItWithExit3() throws IOException {
        machineFile("policy.d/10-base.yaml", POLICY);
        Files.setAttribute(machine.resolve("policy.d"), "unix:mode", 01777);
        AgentjailRun user = asUser();
        assertOnlyLine(
                "agentjail: " + ETC.resolve("policy.d") + ": writable by every user (mode 1777); " + WHY,
                user.cli("policy", "check", "--project", user.project().toString()));
    }

    @Test
    void aFileTheUserOwnsStopsItWithExit3() throws IOException {
        Path file = machineFile("policy.yaml", POLICY);
        Files.setOwner(file, lookup().lookupPrincipalByName(USER));
        int uid = RootLaunchTest.ensureUser(USER);
        AgentjailRun user = asUser();
        assertOnlyLine(
                "agentjail: " + ETC.resolve("policy.yaml") + ": owned by '" + USER + "' (uid " + uid
                        + "), not by root; " + WHY,
                user.cli("policy", "show", "--project", user.project().toString()));
    }

    @Test
    void aFileTheUserCannotReadStopsItWithExit3() throws IOException {
        Path file = machineFile("policy.yaml", POLICY);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        AgentjailRun user = asUser();
        assertOnlyLine(
                "agentjail: " + ETC.resolve("policy.yaml")
                        + ": cannot read: permission denied; everyone who runs agentjail must be able to read it",
                user.cli("policy", "show", "--project", user.project().toString()));
    }

    /** Exit code 3 and {@code line} as the only line agentjail printed on stderr. */
    private static void assertOnlyLine(String line, Command.Result r) {
        assertEquals(ExitCodes.ENVIRONMENT, r.exitCode(), r::describe);
        assertEquals(
                List.of(line),
                r.stderr().lines().filter(l -> l.startsWith("agentjail")).toList(),
                r::describe);
        assertEquals("", r.out(), r::describe);
    }
}
