package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.cli.ExitCodes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local CA on the jail's side: created on first use in the user's data directory, its certificate (and the
 * system roots) visible read-only at /run/agentjail/ca-bundle.pem, its private key nowhere in the jail; a policy that
 * would bind the CA directory in, an upstream CA file that does not parse and a credential the host does not hold all
 * stop the launcher before anything runs, naming the file or variable and never a value.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CaConfinementTest {
    @TempDir
    Path dir;

    @Test
    void theJailSeesTheBundleReadOnlyAndNeverTheKey() throws Exception {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path caDir = run.home().resolve(".local/share/agentjail/ca");
        AgentjailRun.Outcome o = run.bash("""
                echo "bundle=$SSL_CERT_FILE"
                echo "certs=$(grep -c 'BEGIN CERTIFICATE' "$SSL_CERT_FILE")"
                echo "keys=$(grep -c 'PRIVATE KEY' "$SSL_CERT_FILE" /run/agentjail/truststore.p12 | paste -sd,)"
                if echo x >> "$SSL_CERT_FILE" 2>/dev/null; then echo "writable=yes"; else echo "writable=no"; fi
                echo "key_visible=$(test -e %1$s/ca-key.pem && echo yes || echo no)"
                echo "key_mounted=$(grep -c '%1$s' /proc/self/mountinfo)"
                """.formatted(caDir));
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(Files.isRegularFile(caDir.resolve("ca-key.pem")), "the CA was created on first use");
        assertEquals("/run/agentjail/ca-bundle.pem", o.probe("bundle"), o::describe);
        assertTrue(Integer.parseInt(o.probe("certs")) > 1, o::describe);
        assertEquals("/run/agentjail/ca-bundle.pem:0,/run/agentjail/truststore.p12:0", o.probe("keys"), o::describe);
        assertEquals("no", o.probe("writable"), o::describe);
        assertEquals("no", o.probe("key_visible"), o::describe);
        assertEquals("0", o.probe("key_mounted"), o::describe);
    }

    @Test
    void aPolicyBindingTheCaDirectoryIsRefused() {
        // The launcher looks for bwrap before it reads the policy's secrets.
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  read: ["~/.local/share"]
                """);
        Path started = run.project().resolve("started");
        AgentjailRun.Outcome o = run.run("touch", started.toString());
        assertEquals(ExitCodes.USAGE, o.exitCode(), o::describe);
        assertTrue(o.err().contains("CA directory"), o::describe);
        assertFalse(Files.exists(started), "the command ran");
    }

    @Test
    void anUpstreamCaThatDoesNotParseExits2NamingTheFile() throws Exception {
        // The launcher looks for bwrap before it reads the policy's secrets.
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path bad = Files.writeString(dir.resolve("not-a-ca.pem"), "garbage\n");
        run.policy("""
                version: 1
                tls:
                  upstream_ca: ["%s"]
                """.formatted(bad));
        Path started = run.project().resolve("started");
        AgentjailRun.Outcome o = run.run("touch", started.toString());
        assertEquals(ExitCodes.USAGE, o.exitCode(), o::describe);
        assertTrue(o.err().contains("tls.upstream_ca") && o.err().contains(bad.toString()), o::describe);
        assertFalse(Files.exists(started), "the command ran");
        assertFalse(Files.exists(run.auditLog()), "a session was recorded");
    }

    @Test
    void aCredentialTheHostDoesNotHoldExits3NamingTheVariable() {
        // The launcher looks for bwrap before it reads the policy's secrets.
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                network:
                  allow: [api.example.com]
                credentials:
                  - {env: EXAMPLE_API_KEY, hosts: [api.example.com], header: x-api-key}
                """);
        Path started = run.project().resolve("started");
        AgentjailRun.Outcome o = run.run("touch", started.toString());
        assertEquals(ExitCodes.ENVIRONMENT, o.exitCode(), o::describe);
        assertTrue(o.err().contains("EXAMPLE_API_KEY"), o::describe);
        assertFalse(Files.exists(started), "the command ran");
    }

    @Test
    void aShortKnownValueIsRefusedWithoutPrintingIt() {
        // The launcher looks for bwrap before it reads the policy's secrets.
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).env("SHORT_SECRET", "x7Qz9").policy("""
                version: 1
                redaction:
                  known_values: [{env: SHORT_SECRET}]
                """);
        AgentjailRun.Outcome o = run.run("true");
        assertEquals(ExitCodes.ENVIRONMENT, o.exitCode(), o::describe);
        assertTrue(o.err().contains("SHORT_SECRET"), o::describe);
        assertFalse(o.err().contains("x7Qz9") || o.out().contains("x7Qz9"), o::describe);
    }
}
