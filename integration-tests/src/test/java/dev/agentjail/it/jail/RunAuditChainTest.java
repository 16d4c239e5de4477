package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.cli.ExitCodes;
import dev.agentjail.it.support.Command;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code agentjail run --audit-hmac-key}: the session's records are signed, and a key the jail could see is refused. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RunAuditChainTest {
    @TempDir
    Path dir;

    @BeforeEach
    void setUp() {
        AgentjailRun.requireBwrap();
    }

    private static Path key(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "k".repeat(48));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    @Test
    void aSignedSessionVerifiesWithItsKeyOnly() throws Exception {
        Path key = key(dir.resolve("keys/audit.key"));
        AgentjailRun run = AgentjailRun.in(dir).options("--audit-hmac-key", key.toString());

        AgentjailRun.Outcome o = run.bash("echo ran=yes");

        assertEquals(0, o.exitCode(), o::describe);
        String log = Files.readString(run.auditLog());
        assertTrue(log.contains("\"hmac\":\""), log);
        assertFalse(log.contains("k".repeat(48)), "the key never reaches the log");
        Command.Result verified =
                verify("--hmac-key", key.toString(), run.auditLog().toString());
        assertEquals(0, verified.exitCode(), verified::describe);
        Path other = key(dir.resolve("keys/other.key"));
        Files.writeString(other, "x".repeat(48));
        Command.Result forged =
                verify("--hmac-key", other.toString(), run.auditLog().toString());
        assertEquals(1, forged.exitCode(), forged::describe);
        assertTrue(forged.out().contains("bad-hmac") || forged.stderr().contains("bad-hmac"), forged::describe);
    }

    @Test
    void aKeyInsideTheProjectIsRefusedBeforeAnythingStarts() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        Path key = key(run.project().resolve("audit.key"));
        run.options("--audit-hmac-key", key.toString());

        AgentjailRun.Outcome o = run.bash("echo ran=yes");

        assertEquals(ExitCodes.USAGE, o.exitCode(), o::describe);
        assertFalse(o.out().contains("ran=yes"), o::describe);
        assertTrue(o.err().contains("the audit HMAC key " + key + " would be visible inside the jail"), o::describe);
    }

    private static Command.Result verify(String... args) {
        List<String> argv = new java.util.ArrayList<>(List.of(
                AgentjailRun.java().toString(), "-jar", AgentjailRun.jar().toString(), "log", "verify"));
        argv.addAll(List.of(args));
        return Command.run(Duration.ofSeconds(60), argv, Map.of(), Path.of("/"));
    }
}
