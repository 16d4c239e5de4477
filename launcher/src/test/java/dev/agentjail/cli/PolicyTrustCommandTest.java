package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.agentjail.policy.TrustedProjects;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentjail policy trust} and how {@code run}, {@code check} and {@code show} treat a project policy that
 * reaches outside the jail. Each command runs the real entry point in its own JVM, with a HOME, XDG state and config
 * directories of its own, so that the trust it records never touches the machine's.
 */
class PolicyTrustCommandTest {
    private static final String FORWARDING = """
            version: 1
            env:
              forward: [DEPLOY_TOKEN]
            jail:
              devices: [camera]
            """;

    @TempDir
    Path tmp;

    private Path project;
    private Path file;
    private Path store;
    private final Map<String, String> env = new LinkedHashMap<>();

    record Run(int exitCode, String out, String err) {
        String describe() {
            return "exit " + exitCode + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    @BeforeEach
    void layout() throws IOException {
        Path dir = tmp.toRealPath();
        project = Files.createDirectories(dir.resolve("project"));
        Files.createDirectory(project.resolve(".git")); // the project policy search stops here
        file = project.resolve(".agentjail.yaml");
        Path home = Files.createDirectories(dir.resolve("home"));
        env.put("HOME", home.toString());
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("XDG_STATE_HOME", home.resolve(".local/state").toString());
        env.put("XDG_CONFIG_HOME", home.resolve(".config").toString());
        env.put("XDG_CACHE_HOME", home.resolve(".cache").toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        store = home.resolve(".local/state/agentjail/" + TrustedProjects.FILE_NAME);
    }

    /** The launcher's entry point in a child JVM with exactly {@link #env}. */
    private Run run(String... args) throws IOException, InterruptedException {
        return finish(start("run", project, args), "run", args);
    }

    /** Starts the launcher in a child JVM in {@code dir}; its output goes to files named after {@code tag}. */
    private Process start(String tag, Path dir, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // As the jar's manifest says (Enable-Native-Access): Netty loads its native transport.
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.redirectOutput(tmp.resolve(tag + ".out").toFile())
                .redirectError(tmp.resolve(tag + ".err").toFile());
        return pb.start();
    }

    private Run finish(Process process, String tag, String... args) throws IOException, InterruptedException {
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("agentjail " + String.join(" ", args) + " did not finish");
        }
        return new Run(
                process.exitValue(),
                Files.readString(tmp.resolve(tag + ".out"), StandardCharsets.UTF_8),
                Files.readString(tmp.resolve(tag + ".err"), StandardCharsets.UTF_8));
    }

    @Test
    void runRefusesAnUntrustedProjectPolicyAndTrustLetsItThrough() throws Exception {
        Files.writeString(file, FORWARDING);

        Run refused = run("run", "--project", project.toString(), "--", "/bin/true");
        assertEquals(ExitCodes.USAGE, refused.exitCode(), refused.describe());
        assertEquals(
                "agentjail: " + file + ":3: env.forward[0]: copies the host's environment variable 'DEPLOY_TOKEN'"
                        + " into the jail, which widens the jail; a project policy needs"
                        + " your trust for that; review and trust it with: agentjail policy trust --project "
                        + project + " (it widens the jail at " + file + ":5 jail.devices[0] too)\n",
                refused.err());
        assertEquals("", refused.out());

        // check only looks at files: a warning per entry, and success.
        Run checked = run("policy", "check", "--project", project.toString());
        assertEquals(ExitCodes.OK, checked.exitCode(), checked.describe());
        assertTrue(
                checked.err()
                        .contains(file + ":5: jail.devices[0]: warning: gives the jail the host's camera devices;"
                                + " a project policy needs your trust"),
                checked.describe());

        Run trusted = run("policy", "trust", "--project", project.toString());
        assertEquals(ExitCodes.OK, trusted.exitCode(), trusted.describe());
        assertEquals(
                "The project policy of " + project + " widens the jail:\n"
                        + "  Environment of the jail:\n"
                        + "    " + file + ":3: env.forward[0]: copies the host's environment variable 'DEPLOY_TOKEN'"
                        + " into the jail\n"
                        + "  Jail options, devices and commands:\n"
                        + "    " + file + ":5: jail.devices[0]: gives the jail the host's camera devices\n"
                        + "Trusted " + project + " (recorded in " + store + "); agentjail run uses these entries"
                        + " until one of these files changes:\n"
                        + "  " + file + "  sha256:" + Sha256Hex.of(Files.readAllBytes(file)) + "\n",
                trusted.out());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(store)));

        Run shown = run("policy", "show", "--origin", "--project", project.toString());
        assertEquals(ExitCodes.OK, shown.exitCode(), shown.describe());
        assertTrue(shown.out().contains("- DEPLOY_TOKEN  # " + file + ":3 (trusted project entry)\n"), shown.out());
        assertEquals("", shown.err());
        Run clean = run("policy", "check", "--project", project.toString());
        assertEquals("", clean.err(), clean.describe());

        // One more byte and the trust lapses.
        Files.writeString(file, FORWARDING + "# harmless?\n");
        Run lapsed = run("run", "--project", project.toString(), "--", "/bin/true");
        assertEquals(ExitCodes.USAGE, lapsed.exitCode(), lapsed.describe());
        assertTrue(
                lapsed.err()
                        .contains("you trusted this project policy, but " + file + " changed since; review and"
                                + " trust it again with: agentjail policy trust --project " + project),
                lapsed.describe());
    }

    @Test
    void revokeWithdrawsTheTrust() throws Exception {
        Files.writeString(file, FORWARDING);
        assertEquals(
                ExitCodes.OK,
                run("policy", "trust", "--project", project.toString()).exitCode());

        Run revoked = run("policy", "trust", "--revoke", "--project", project.toString());
        assertEquals(ExitCodes.OK, revoked.exitCode(), revoked.describe());
        assertEquals("Revoked the trust in the project policy of " + project + "\n", revoked.out());
        Run again = run("policy", "trust", "--revoke", "--project", project.toString());
        assertEquals(ExitCodes.OK, again.exitCode(), again.describe());
        assertEquals(
                project + " was not trusted, nor is any project policy (" + store + " lists none); nothing to revoke\n",
                again.out());

        Run refused = run("run", "--project", project.toString(), "--", "/bin/true");
        assertEquals(ExitCodes.USAGE, refused.exitCode(), refused.describe());
        assertTrue(refused.err().contains("a project policy needs your trust"), refused.describe());
    }

    @Test
    void trustCommandsRunningAtOnceLoseNoneOfTheirRecords() throws Exception {
        int n = 6;
        List<Path> projects = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Path p = Files.createDirectories(tmp.toRealPath().resolve("many/p" + i));
            Files.createDirectory(p.resolve(".git"));
            Files.writeString(p.resolve(".agentjail.yaml"), FORWARDING);
            projects.add(p);
        }
        // All JVMs start together; each reads the trust file, adds its project and writes it back.
        List<Process> running = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            running.add(start(
                    "trust" + i,
                    projects.get(i),
                    "policy",
                    "trust",
                    "--project",
                    projects.get(i).toString()));
        }
        for (int i = 0; i < n; i++) {
            Run r = finish(running.get(i), "trust" + i, "policy", "trust");
            assertEquals(ExitCodes.OK, r.exitCode(), r.describe());
        }

        TrustedProjects recorded = TrustedProjects.read(store);
        assertEquals(projects, recorded.roots(), "every trust command's project is recorded");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(store)));
        try (var left = Files.list(store.getParent())) {
            assertEquals(
                    List.of("." + TrustedProjects.FILE_NAME + ".lock", TrustedProjects.FILE_NAME),
                    left.map(f -> f.getFileName().toString()).sorted().toList(),
                    "no temporary file is left behind");
        }
    }

    @Test
    void aTeamPolicyThatForbidsTrustIsObeyed() throws Exception {
        Path team =
                Files.writeString(tmp.resolve("team.yaml"), "version: 1\ntrust: {projects: never}\nlocked: [trust]\n");
        env.put("AGENTJAIL_TEAM_POLICY", team.toString());
        Files.writeString(file, FORWARDING);

        Run trust = run("policy", "trust", "--project", project.toString());

        assertEquals(ExitCodes.USAGE, trust.exitCode(), trust.describe());
        assertTrue(trust.out().contains(file + ":3: env.forward[0]: "), trust.describe());
        assertEquals(
                "agentjail: not trusted: the team policy forbids trusting project policies (" + team.toRealPath()
                        + ":2: trust.projects: never); ask for it in your user policy or a --policy file instead\n",
                trust.err());
        assertFalse(Files.exists(store), "trust was recorded although the team policy forbids it");
        Run refused = run("run", "--project", project.toString(), "--", "/bin/true");
        assertEquals(ExitCodes.USAGE, refused.exitCode(), refused.describe());
        assertTrue(refused.err().contains("the team policy forbids trusting project policies"), refused.describe());
    }

    @Test
    void nothingToTrustWithoutAProjectPolicy() throws Exception {
        Run trust = run("policy", "trust", "--project", project.toString());

        assertEquals(ExitCodes.USAGE, trust.exitCode(), trust.describe());
        assertEquals(
                "agentjail: no .agentjail.yaml in " + project
                        + " or its parents up to the repository root: nothing to trust\n",
                trust.err());
        assertFalse(Files.exists(store));
    }

    @Test
    void aProjectPolicyThatOnlyNarrowsNeedsNoTrust() throws Exception {
        Files.createDirectories(project.resolve("tools"));
        Files.writeString(
                file,
                "version: 1\nfilesystem:\n  read: [" + project.resolve("tools") + "]\n  mask: [\".env\"]\n"
                        + "network:\n  deny: [evil.test]\nlimits:\n  timeout: 1h\n");

        Run checked = run("policy", "check", "--project", project.toString());
        Run trust = run("policy", "trust", "--project", project.toString());

        assertEquals(ExitCodes.OK, checked.exitCode(), checked.describe());
        assertEquals("", checked.err());
        assertEquals(ExitCodes.OK, trust.exitCode(), trust.describe());
        assertTrue(
                trust.out()
                        .startsWith(
                                "The project policy of " + project + " widens nothing: it only narrows the jail.\n"),
                trust.out());
    }

    @Test
    void theTrustRecordIsNeverVisibleInsideTheJail() throws Exception {
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/bwrap")) || "true".equals(System.getenv("CI")),
                "needs bwrap (checked before the binds)");
        Path policy = Files.writeString(tmp.resolve("p.yaml"), "version: 1\nfilesystem:\n  read: [~/.local/state]\n");
        Path log = tmp.resolve("logs/audit.jsonl");
        // The record's directory exists, as it does for anyone who trusted a project: a bind of a path that does not
        // exist is left out of the jail altogether (BindSources).
        Files.createDirectories(store.getParent());

        Run refused = run(
                "run",
                "--project",
                project.toString(),
                "--policy",
                policy.toString(),
                "--audit-log",
                log.toString(),
                "--",
                "/bin/true");

        assertEquals(ExitCodes.USAGE, refused.exitCode(), refused.describe());
        assertTrue(
                refused.err()
                        .contains("agentjail's record of trusted project policies " + store
                                + " would be visible inside the jail"),
                refused.describe());
    }

    /** Hex SHA-256, as {@code sha256sum} prints it. */
    private static final class Sha256Hex {
        static String of(byte[] bytes) throws Exception {
            return java.util.HexFormat.of()
                    .formatHex(
                            java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
        }
    }
}
