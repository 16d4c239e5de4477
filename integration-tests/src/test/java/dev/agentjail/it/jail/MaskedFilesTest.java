package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files matching the policy's mask globs are empty and read-only inside, at any depth, while the host copies keep
 * their content; the session-start record lists what was masked.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MaskedFilesTest {
    private static final String SECRET = "DATABASE_PASSWORD=canary-db-5e1f\n";

    @TempDir
    Path dir;

    @Test
    void maskedEnvFilesAreEmptyAndReadOnlyInside() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  mask: [".env"]
                """);
        Path env = run.project().resolve(".env");
        Path nested = run.project().resolve("services/api/.env");
        Files.writeString(env, SECRET);
        Files.createDirectories(nested.getParent());
        Files.writeString(nested, SECRET);
        Files.writeString(run.project().resolve(".env.example"), "DATABASE_PASSWORD=\n");

        AgentjailRun.Outcome o = run.bash("""
                echo "size=$(wc -c < .env)"
                echo "nested_size=$(wc -c < services/api/.env)"
                echo "content=$(cat .env services/api/.env)"
                echo 'DATABASE_PASSWORD=changed' > .env; echo "write=$?"
                rm -f .env; echo "delete=$?"
                echo "example=$(cat .env.example)"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("0", o.probe("size").strip(), o::describe),
                () -> assertEquals("0", o.probe("nested_size").strip(), o::describe),
                () -> assertEquals("", o.probe("content"), o::describe),
                () -> assertNotEquals("0", o.probe("write"), "writing the masked .env"),
                () -> assertNotEquals("0", o.probe("delete"), "deleting the masked .env"),
                () -> assertEquals("DATABASE_PASSWORD=", o.probe("example"), "a file the glob does not match"));
        assertFalse(o.out().contains("canary"), o::describe);
        assertEquals(SECRET, Files.readString(env), "the host's .env");
        assertEquals(SECRET, Files.readString(nested), "the host's nested .env");
        JsonNode start = o.only(AuditRecord.KIND_SESSION_START);
        String binds = start.path("binds").toString();
        assertTrue(binds.contains("masked " + env.toRealPath()), binds);
        assertTrue(binds.contains("masked " + nested.toRealPath()), binds);
    }
}
