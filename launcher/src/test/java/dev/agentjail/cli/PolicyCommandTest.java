package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentjail policy check|show|suggest} and {@code agentjail init} through the real entry point, on policy
 * files in a temporary project. (They also read the machine's team and user policy; the build machines have none.)
 */
class PolicyCommandTest {
    @TempDir
    Path dir;

    private Path project;

    @BeforeEach
    void project() throws Exception {
        project = Files.createDirectories(dir.resolve("project"));
        Files.createDirectory(project.resolve(".git")); // the project policy search stops here
    }

    private static CaCommandTest.Run run(String... args) {
        return CaCommandTest.run(args);
    }

    @Test
    void checkAcceptsAGoodFileAndNamesFileLineAndKeyOfABadOne() throws Exception {
        Path good = Files.writeString(dir.resolve("good.yaml"), "version: 1\nnetwork: {allow: [api.test]}\n");
        Path bad = Files.writeString(dir.resolve("bad.yaml"), "version: 1\nnetwork:\n  alow: [api.test]\n");
        CaCommandTest.Run ok = run("policy", "check", good.toString());
        assertEquals(ExitCodes.OK, ok.exitCode(), ok.err());
        assertEquals("ok: " + good + "\n", ok.out());
        CaCommandTest.Run refused = run("policy", "check", good.toString(), bad.toString());
        assertEquals(ExitCodes.USAGE, refused.exitCode());
        assertEquals(bad + ":3: network.alow: unknown key 'alow' (did you mean 'allow'?)\n", refused.err());
        assertTrue(refused.out().contains("ok: " + good), "every file is checked, also after a bad one");
    }

    @Test
    void checkWithoutFilesChecksTheMergedStackOfTheProject() throws Exception {
        Files.writeString(project.resolve(".agentjail.yaml"), "version: 1\nlocked: [limits.timeout]\n");
        Path override = Files.writeString(dir.resolve("o.yaml"), "version: 1\nlimits: {timeout: 1h}\n");
        CaCommandTest.Run refused =
                run("policy", "check", "--project", project.toString(), "--policy", override.toString());
        assertEquals(ExitCodes.USAGE, refused.exitCode());
        assertTrue(
                refused.err()
                        .contains(override + ":2: limits.timeout: locked by the project policy ("
                                + project.resolve(".agentjail.yaml") + ":2)"),
                refused.err());
        CaCommandTest.Run ok = run("policy", "check", "--project", project.toString());
        assertEquals(ExitCodes.OK, ok.exitCode(), ok.err());
        assertTrue(ok.out().contains("project policy " + project.resolve(".agentjail.yaml")), ok.out());
    }

    @Test
    void showPrintsTheMergedPolicyWithOrigins() throws Exception {
        Path projectFile = Files.writeString(
                project.resolve(".agentjail.yaml"),
                "version: 1\nnetwork:\n  allow: [api.test]\nlimits: {timeout: 2h}\n");
        Path override = Files.writeString(dir.resolve("o.yaml"), "version: 1\nnetwork:\n  allow: [more.test]\n");
        CaCommandTest.Run shown =
                run("policy", "show", "--origin", "--project", project.toString(), "--policy", override.toString());
        assertEquals(ExitCodes.OK, shown.exitCode(), shown.err());
        assertTrue(
                shown.out()
                        .contains("    - api.test  # " + projectFile + ":3 (not trusted: agentjail run refuses it (see"
                                + " agentjail policy trust))\n"),
                shown.out());
        assertTrue(shown.out().contains("    - more.test  # " + override + ":3\n"), shown.out());
        assertTrue(shown.out().contains("  timeout: 2h  # " + projectFile + ":4\n"), shown.out());
        // Without --origin it is a policy that loads back.
        CaCommandTest.Run plain =
                run("policy", "show", "--project", project.toString(), "--policy", override.toString());
        assertFalse(plain.out().contains(" # /"), plain.out());
        assertEquals(
                2, PolicyLoader.parse(plain.out(), "shown").network().allow().size());
    }

    @Test
    void showSaysWhenTheBuiltInPolicyApplies() {
        CaCommandTest.Run shown = run("policy", "show", "--project", project.toString());
        assertEquals(ExitCodes.OK, shown.exitCode(), shown.err());
        assertTrue(shown.out().startsWith("# no policy file applies here"), shown.out());
    }

    private static String record(String host, int port, String method, String decision, String reason) {
        return AuditLines.request(host, port, method, decision, reason);
    }

    @Test
    void suggestProposesOnlyHostsTheAllowListRefused() throws Exception {
        Files.writeString(project.resolve(".agentjail.yaml"), "version: 1\nnetwork:\n  allow: [ok.test]\n");
        List<String> lines = new ArrayList<>();
        lines.add(record("a.test", 443, "CONNECT", AuditRecord.DENY, Reasons.NOT_ALLOWED));
        lines.add(record("a.test", 443, "CONNECT", AuditRecord.DENY, Reasons.NOT_ALLOWED));
        lines.add(record("b.test", 8443, "CONNECT", AuditRecord.DENY, Reasons.NOT_ALLOWED));
        lines.add(record("c.test", 80, "GET", AuditRecord.ALLOW, Reasons.WOULD_DENY));
        lines.add(record("evil.test", 443, "CONNECT", AuditRecord.DENY, Reasons.DENIED_BY_RULE));
        lines.add(record("ok.test", 443, "CONNECT", AuditRecord.DENY, Reasons.NOT_ALLOWED)); // allowed by now
        Path log = Files.write(dir.resolve("audit.jsonl"), lines);
        CaCommandTest.Run suggested =
                run("policy", "suggest", "--project", project.toString(), "--from-log", log.toString());
        assertEquals(ExitCodes.OK, suggested.exitCode(), suggested.err());
        String out = suggested.out();
        assertTrue(out.contains("+    - a.test    # 2 requests, last 2026-11-30T10:00:00Z\n"), out);
        assertTrue(out.contains("+    - b.test:8443    # 1 request"), out);
        assertTrue(out.contains("+    - c.test    # 1 request"), out);
        assertFalse(out.contains("+    - evil.test"), out);
        assertFalse(out.contains("+    - ok.test"), out);
        assertTrue(out.contains("# not suggested: ok.test (allowed now: network.allow[0]=ok.test)"), out);
        assertTrue(out.contains("# not suggested: evil.test (refused: denied-by-rule)"), out);
        assertTrue(out.contains("--- " + project.resolve(".agentjail.yaml")), out);
    }

    @Test
    void initWritesAPolicyThatChecksAndNeverOverwritesByAccident() throws Exception {
        CaCommandTest.Run first = run("init", "--project", project.toString());
        assertEquals(ExitCodes.OK, first.exitCode(), first.err());
        Path file = project.resolve(".agentjail.yaml");
        assertEquals(ExitCodes.OK, run("policy", "check", file.toString()).exitCode());
        Files.writeString(file, "version: 1\n# mine\n");
        CaCommandTest.Run again = run("init", "--project", project.toString());
        assertEquals(ExitCodes.USAGE, again.exitCode());
        assertTrue(again.err().contains("already exists"), again.err());
        assertEquals("version: 1\n# mine\n", Files.readString(file));
        assertEquals(
                ExitCodes.OK,
                run("init", "--project", project.toString(), "--force").exitCode());
        assertTrue(Files.readString(file).contains("allow: []"));
        CaCommandTest.Run unknown = run("init", "--project", project.toString(), "--agent", "no-such-agent", "--force");
        assertEquals(ExitCodes.USAGE, unknown.exitCode());
    }

    @Test
    void aLockedTimeoutCannotBeChangedFromTheCommandLine() throws Exception {
        Files.writeString(project.resolve(".agentjail.yaml"), "version: 1\nlimits: {timeout: 1h}\nlocked: [limits]\n");
        CaCommandTest.Run refused = run("run", "--project", project.toString(), "--timeout", "9h", "--", "true");
        assertEquals(ExitCodes.USAGE, refused.exitCode());
        assertTrue(
                refused.err()
                        .contains(
                                "--timeout: limits.timeout is locked by " + project.resolve(".agentjail.yaml") + ":3"),
                refused.err());
    }
}
