package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.HostPattern;
import dev.agentjail.policy.PolicyLayer;
import dev.agentjail.policy.PolicyStack;
import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code agentjail policy suggest} on real audit lines (written by the proxy's own record codec) and real policy files:
 * what it proposes, what it skips and why, {@code --session}, and {@code --apply} on every shape of project file. Each
 * run has a HOME and XDG config directory of its own, so the machine's team and user policies never apply.
 */
class PolicySuggestTest {
    private static final String DENY = AuditRecord.DENY;
    private static final String ALLOW = AuditRecord.ALLOW;

    @TempDir
    Path tmp;

    private Path project;
    private Path file;
    private Path log;
    private Map<String, String> env;

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
        log = dir.resolve("audit.jsonl");
        Path home = Files.createDirectories(dir.resolve("home"));
        env = Map.of(
                "HOME", home.toString(),
                "XDG_CONFIG_HOME", home.resolve(".config").toString(),
                "XDG_STATE_HOME", home.resolve(".local/state").toString());
    }

    /** {@code agentjail policy suggest ARGS} with {@link #env}, failures mapped to exit codes as {@link Main} does. */
    private Run suggest(String... args) {
        PolicySuggest command = new PolicySuggest();
        command.env = env;
        CommandLine cli = new CommandLine(command);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        cli.setExitCodeExceptionMapper(ex -> ex instanceof CliException ce ? ce.exitCode() : ExitCodes.USAGE);
        cli.setExecutionExceptionHandler((ex, c, parsed) -> {
            c.getErr().println("agentjail: " + ex.getMessage());
            return ex instanceof CliException ce ? ce.exitCode() : ExitCodes.FAILURE;
        });
        List<String> all = new ArrayList<>(List.of("--project", project.toString(), "--from-log", log.toString()));
        all.addAll(List.of(args));
        return new Run(cli.execute(all.toArray(String[]::new)), out.toString(), err.toString());
    }

    private static String refused(String host, int port, String method) {
        return AuditLines.request(host, port, method, DENY, Reasons.NOT_ALLOWED);
    }

    private static List<String> proposed(String out) {
        return out.lines().filter(l -> l.startsWith("+    - ")).toList();
    }

    /** host, port, method as the log has them; the line policy suggest must print for it. */
    private record Row(String host, int port, String method, String line) {}

    /** A row for an address the SSRF guard refuses, shown as {@code display}, canonical {@code address}. */
    private static Row ssrf(String host, int port, String method, String display, String reason, String address) {
        return new Row(
                host,
                port,
                method,
                display + " (" + reason + " address " + address
                        + ": the SSRF guard refuses it, an allow entry would let it through)");
    }

    @Test
    void proposesOnlyPublicNamesAndSaysWhyForEveryOtherHost() throws Exception {
        Files.writeString(file, "version: 1\nnetwork:\n  allow: [ok.test]\n");
        List<Row> skipped = List.of(
                ssrf("169.254.169.254", 80, "GET", "169.254.169.254", "ssrf-link-local", "169.254.169.254"),
                ssrf("127.0.0.1", 8000, "GET", "127.0.0.1:8000", "ssrf-loopback", "127.0.0.1"),
                ssrf("10.1.2.3", 443, "CONNECT", "10.1.2.3", "ssrf-private", "10.1.2.3"),
                ssrf("192.168.0.10", 80, "GET", "192.168.0.10", "ssrf-private", "192.168.0.10"),
                ssrf("168.63.129.16", 80, "GET", "168.63.129.16", "ssrf-metadata", "168.63.129.16"),
                ssrf("100.100.100.200", 80, "GET", "100.100.100.200", "ssrf-cgnat", "100.100.100.200"),
                ssrf("0.0.0.0", 80, "GET", "0.0.0.0", "ssrf-unspecified", "0.0.0.0"),
                ssrf("224.0.0.251", 80, "GET", "224.0.0.251", "ssrf-multicast", "224.0.0.251"),
                ssrf("240.0.0.1", 80, "GET", "240.0.0.1", "ssrf-reserved", "240.0.0.1"),
                ssrf("::1", 443, "CONNECT", "[::1]", "ssrf-loopback", "[::1]"),
                ssrf("fd12:3456::1", 443, "CONNECT", "[fd12:3456::1]", "ssrf-unique-local", "[fd12:3456::1]"),
                ssrf("fe80::1", 443, "CONNECT", "[fe80::1]", "ssrf-link-local", "[fe80::1]"),
                ssrf("::ffff:127.0.0.1", 443, "CONNECT", "[::ffff:127.0.0.1]", "ssrf-loopback", "[::ffff:127.0.0.1]"),
                ssrf("[::FFFF:7F00:1]", 443, "CONNECT", "[::FFFF:7F00:1]", "ssrf-loopback", "[::ffff:127.0.0.1]"),
                ssrf(
                        "64:ff9b::a9fe:a9fe",
                        80,
                        "GET",
                        "[64:ff9b::a9fe:a9fe]",
                        "ssrf-link-local",
                        "[64:ff9b::a9fe:a9fe]"),
                ssrf("2002:7f00:1::", 443, "CONNECT", "[2002:7f00:1::]", "ssrf-loopback", "[2002:7f00:1::]"),
                ssrf("2130706433", 80, "GET", "2130706433", "ssrf-loopback", "127.0.0.1"),
                ssrf("0x7f.1", 80, "GET", "0x7f.1", "ssrf-loopback", "127.0.0.1"),
                ssrf("0xA9FEA9FE", 80, "GET", "0xA9FEA9FE", "ssrf-link-local", "169.254.169.254"),
                ssrf("127.0.0.1.", 443, "CONNECT", "127.0.0.1.", "ssrf-loopback", "127.0.0.1"),
                new Row("localhost", 3000, "GET", "localhost:3000 (always the local host)"),
                new Row("LOCALHOST.", 443, "CONNECT", "LOCALHOST. (always the local host)"),
                new Row("api.localhost", 443, "CONNECT", "api.localhost (always the local host)"),
                new Row(
                        "github.mcp.agentjail.internal",
                        80,
                        "GET",
                        "github.mcp.agentjail.internal (agentjail's own name (agentjail.internal))"),
                new Row(
                        "93.184.215.14",
                        443,
                        "CONNECT",
                        "93.184.215.14 (a public IP address: suggest proposes host names only; add an IP entry by"
                                + " hand if you mean it)"),
                new Row(
                        "151.101.1.1",
                        443,
                        "CONNECT",
                        "151.101.1.1 (the address of cdn.example.net; the name is what to allow)"),
                new Row("a b.test", 443, "CONNECT", "a b.test (not a valid host: space in authority)"));
        List<String> lines = new ArrayList<>();
        for (Row row : skipped) {
            lines.add(refused(row.host(), row.port(), row.method()));
        }
        // A name seen with the public address it resolved to: the address is not proposed, nor is the name (allowed).
        lines.add(AuditLines.request(
                AuditLines.SESSION, "cdn.example.net", 443, "CONNECT", ALLOW, Reasons.ALLOWED, "151.101.1.1"));
        lines.add(AuditLines.request(
                AuditLines.SESSION, "intranet.example.com", 443, "CONNECT", ALLOW, Reasons.WOULD_DENY, "10.0.0.5"));
        lines.add(AuditLines.request("metadata.example.org", 80, "GET", DENY, "ssrf-link-local"));
        lines.add(refused("api.example.com", 443, "CONNECT"));
        lines.add(refused("Registry.Example.ORG.", 8443, "CONNECT"));
        lines.add(refused("api.example.com", 443, "CONNECT"));
        Files.write(log, lines);

        Run run = suggest();

        assertEquals(ExitCodes.OK, run.exitCode(), run.describe());
        assertEquals(
                List.of(
                        "+    - api.example.com    # 2 requests, last 2026-11-30T10:00:00Z",
                        "+    - registry.example.org:8443    # 1 request, last 2026-11-30T10:00:00Z"),
                proposed(run.out()),
                run.describe());
        for (Row row : skipped) {
            assertTrue(run.out().contains("# not suggested: " + row.line() + "\n"), row.host() + "\n" + run.describe());
        }
        assertTrue(
                run.out()
                        .contains("# not suggested: intranet.example.com (resolved to the ssrf-private address"
                                + " 10.0.0.5, which the SSRF guard refuses)\n"),
                run.describe());
        assertTrue(
                run.out().contains("# not suggested: metadata.example.org (refused: ssrf-link-local)\n"),
                run.describe());
        long notSuggested =
                run.out().lines().filter(l -> l.startsWith("# not suggested: ")).count();
        assertEquals(skipped.size() + 2, notSuggested, "one line per skipped host\n" + run.describe());
    }

    @Test
    void ipAddressesAreSkippedInReportModeToo() throws Exception {
        Files.writeString(file, "version: 1\nnetwork:\n  mode: report\n  allow: [ok.test]\n");
        Files.write(
                log,
                List.of(
                        AuditLines.request("169.254.169.254", 80, "GET", ALLOW, Reasons.WOULD_DENY),
                        AuditLines.request("docs.example.org", 443, "CONNECT", ALLOW, Reasons.WOULD_DENY)));

        Run run = suggest();

        assertEquals(List.of("+    - docs.example.org    # 1 request, last 2026-11-30T10:00:00Z"), proposed(run.out()));
        assertTrue(run.out().contains("# not suggested: 169.254.169.254 (ssrf-link-local"), run.describe());
    }

    @Test
    void sessionReadsOnlyThatSessionsRecords() throws Exception {
        Files.writeString(file, "version: 1\nnetwork:\n  allow: [ok.test]\n");
        Files.write(
                log,
                List.of(
                        AuditLines.request("s1", "one.example.com", 443, "CONNECT", DENY, Reasons.NOT_ALLOWED, null),
                        AuditLines.request("s2", "two.example.com", 443, "CONNECT", DENY, Reasons.NOT_ALLOWED, null),
                        AuditLines.request(
                                "s2", "evil.example.com", 443, "CONNECT", DENY, Reasons.DENIED_BY_RULE, null)));

        Run one = suggest("--session", "s1");
        assertEquals(ExitCodes.OK, one.exitCode(), one.describe());
        assertEquals(List.of("+    - one.example.com    # 1 request, last 2026-11-30T10:00:00Z"), proposed(one.out()));
        assertFalse(one.out().contains("evil.example.com"), one.describe());
        assertTrue(one.out().startsWith("# agentjail policy suggest: 1 requests read from " + log + " (session s1)\n"));

        Run all = suggest();
        assertEquals(2, proposed(all.out()).size(), all.describe());

        Run none = suggest("--session", "s3");
        assertEquals(ExitCodes.USAGE, none.exitCode(), none.describe());
        assertEquals("agentjail: --session: no record of session s3 in " + log + "\n", none.err());
        assertEquals("", none.out());
    }

    @Test
    void usageErrorsExitWith2ThroughTheRealEntryPoint() {
        Path nowhere = Path.of("/nonexistent-agentjail-test/audit.jsonl");
        CaCommandTest.Run missing = CaCommandTest.run("policy", "suggest", "--from-log", nowhere.toString());
        assertEquals(ExitCodes.USAGE, missing.exitCode());
        assertTrue(missing.err().contains("cannot read " + nowhere + ": no such file or directory"), missing.err());
        CaCommandTest.Run empty = CaCommandTest.run("policy", "suggest", "--from-log", "x.jsonl", "--session", "");
        assertEquals(ExitCodes.USAGE, empty.exitCode());
        assertTrue(empty.err().contains("--session: empty session id"), empty.err());
        CaCommandTest.Run help = CaCommandTest.run("policy", "suggest", "--help");
        assertEquals(ExitCodes.OK, help.exitCode());
        for (String option : List.of("--from-log", "--session", "--apply", "--project", "Exit status")) {
            assertTrue(help.out().contains(option), help.out());
        }
    }

    private void twoRefusals() throws IOException {
        Files.write(
                log,
                List.of(
                        refused("api.example.com", 443, "CONNECT"),
                        refused("registry.example.org", 8443, "CONNECT"),
                        refused("169.254.169.254", 80, "GET")));
    }

    /** The project's allow list as the policies module's loader reads the merged stack. */
    private List<String> allowAfterLoad() throws Exception {
        return PolicyStack.load(List.of(PolicyStack.Input.file(PolicyLayer.PROJECT, file)), tmp)
                .policy()
                .network()
                .allow()
                .stream()
                .map(HostPattern::text)
                .toList();
    }

    @Test
    void applyCreatesAMissingProjectPolicy() throws Exception {
        twoRefusals();

        Run run = suggest("--apply");

        assertEquals(ExitCodes.OK, run.exitCode(), run.describe());
        String text = "version: 1\nnetwork:\n  allow:\n    - api.example.com\n    - registry.example.org:8443\n";
        assertEquals(text, Files.readString(file));
        assertEquals("rw-r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertTrue(
                run.out()
                        .contains(
                                "--- /dev/null\n+++ " + file + "\n@@ -0,0 +1,5 @@\n+version: 1\n+network:\n+  allow:\n"
                                        + "+    - api.example.com\n+    - registry.example.org:8443\n"),
                run.describe());
        assertTrue(run.out().contains("# not suggested: 169.254.169.254 (ssrf-link-local"), run.describe());
        assertTrue(run.out().contains("agentjail policy trust --project " + project), run.describe());
        assertTrue(run.out().contains("# until then agentjail run refuses this project policy\n"), run.describe());
        assertEquals(List.of("api.example.com", "registry.example.org:8443"), allowAfterLoad());
        assertEquals(List.of(), proposed(suggest().out()), "nothing is left to suggest");
        assertNoTemporaryFiles();
    }

    @Test
    void applyAppendsToABlockListAndKeepsCommentsAndMode() throws Exception {
        String before = """
                # our project
                version: 1
                network:
                  # hosts we need
                  allow:
                    - ok.test     # the api
                  deny: [evil.test]   # never
                limits: {timeout: 2h}
                """;
        Files.writeString(file, before);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        twoRefusals();

        Run run = suggest("--apply");

        assertEquals(ExitCodes.OK, run.exitCode(), run.describe());
        String after = before.replace(
                "    - ok.test     # the api\n",
                "    - ok.test     # the api\n    - api.example.com\n    - registry.example.org:8443\n");
        assertEquals(after, Files.readString(file));
        assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertTrue(
                run.out()
                        .contains("--- " + file + "\n+++ " + file + "\n@@ -4,5 +4,7 @@\n   # hosts we need\n"
                                + "   allow:\n     - ok.test     # the api\n+    - api.example.com\n"
                                + "+    - registry.example.org:8443\n   deny: [evil.test]   # never\n"
                                + " limits: {timeout: 2h}\n"),
                run.describe());
        assertTrue(run.out().contains("# wrote 2 entries to network.allow in " + file), run.describe());
        assertEquals(List.of("ok.test", "api.example.com", "registry.example.org:8443"), allowAfterLoad());
        assertNoTemporaryFiles();
    }

    @Test
    void applyRefusesAFlowListAndWritesNothing() throws Exception {
        Files.writeString(file, "version: 1\nnetwork:\n  allow: [ok.test, other.test]\n");
        byte[] before = Files.readAllBytes(file);
        twoRefusals();

        Run run = suggest("--apply");

        assertEquals(ExitCodes.USAGE, run.exitCode(), run.describe());
        assertTrue(
                run.err().startsWith("agentjail: --apply: " + file + ":3: network.allow: a flow-style list"),
                run.describe());
        assertTrue(run.err().endsWith("; nothing written\n"), run.describe());
        assertArrayEquals(before, Files.readAllBytes(file));
        assertNoTemporaryFiles();
    }

    @Test
    void applyRefusesASymlinkedProjectPolicy() throws Exception {
        Path real = Files.writeString(
                tmp.toRealPath().resolve("shared.yaml"), "version: 1\nnetwork:\n  allow:\n    - ok.test\n");
        byte[] before = Files.readAllBytes(real);
        Files.createSymbolicLink(file, real);
        twoRefusals();

        Run run = suggest("--apply");

        assertEquals(ExitCodes.USAGE, run.exitCode(), run.describe());
        assertTrue(run.err().contains(file + " is a symbolic link"), run.describe());
        assertArrayEquals(before, Files.readAllBytes(real));
        assertTrue(Files.isSymbolicLink(file));
        assertNoTemporaryFiles();
    }

    @Test
    void applyRefusesWhatAMoreAuthoritativeLayerLocked() throws Exception {
        for (String locked : List.of("network.allow", "network")) {
            Path team = Files.writeString(
                    tmp.toRealPath().resolve("team.yaml"),
                    "version: 1\nnetwork:\n  allow: [corp.test]\nlocked: [" + locked + "]\n");
            env = Map.of(
                    "HOME",
                    env.get("HOME"),
                    "XDG_CONFIG_HOME",
                    env.get("XDG_CONFIG_HOME"),
                    "AGENTJAIL_TEAM_POLICY",
                    team.toString());
            Files.writeString(file, "version: 1\nlimits: {timeout: 2h}\n");
            byte[] before = Files.readAllBytes(file);
            twoRefusals();

            Run run = suggest("--apply");

            assertEquals(ExitCodes.USAGE, run.exitCode(), locked + "\n" + run.describe());
            assertTrue(
                    run.err().contains(file + ":4: network.allow: locked by the team policy (" + team + ":4)"),
                    locked + "\n" + run.describe());
            assertTrue(run.err().endsWith("; nothing written\n"), run.describe());
            assertArrayEquals(before, Files.readAllBytes(file), locked);
            assertNoTemporaryFiles();
        }
    }

    private void assertNoTemporaryFiles() throws IOException {
        try (Stream<Path> files = Files.list(project)) {
            assertEquals(
                    List.of(".agentjail.yaml", ".git"),
                    files.map(f -> f.getFileName().toString()).sorted().toList(),
                    "no temporary file is left behind");
        }
    }
}
