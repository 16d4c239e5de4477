package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credentials in the user's home and in the launcher's environment do not reach the jail (corpus §11 cases 165–167):
 * the home inside is an empty tmpfs, so a planted {@code ~/.ssh/id_ed25519}, {@code ~/.aws/credentials},
 * {@code ~/.netrc} and {@code ~/.git-credentials} are simply absent; a planted secret variable is in no process's
 * environment inside (not the agent's, not bwrap's init), while a variable the policy forwards arrives; the audit log
 * names the forwarded variable and never holds a value. An audit log placed inside the project is no more visible
 * than one in the home.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CredentialIsolationTest {
    private static final String SSH_KEY = "canary-ssh-private-key-3f9a1c";
    private static final String AWS_SECRET = "canary-aws-secret-7b2e55d1";
    private static final String FORWARDED = "forwarded-by-the-policy-0c4d";

    @TempDir
    Path dir;

    @Test
    void plantedHomeCredentialsAndSecretVariablesAreInvisibleInside() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir)
                .policy("""
                        version: 1
                        env:
                          forward: [AGENTJAIL_IT_FORWARDED]
                        """)
                .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
                .env("GITHUB_TOKEN", "ghp_" + AWS_SECRET)
                .env("AGENTJAIL_IT_FORWARDED", FORWARDED);
        plant(run.home().resolve(".ssh/id_ed25519"), SSH_KEY);
        plant(run.home().resolve(".aws/credentials"), "aws_secret_access_key = " + AWS_SECRET);
        plant(run.home().resolve(".netrc"), "machine x login u password " + SSH_KEY);
        plant(run.home().resolve(".git-credentials"), "https://u:" + SSH_KEY + "@example.com");

        AgentjailRun.Outcome o = run.bash("""
                echo "home=$HOME"
                echo "home_entries=$(ls -A "$HOME" | tr '\\n' ' ')"
                [ -e ~/.ssh ]; echo "ssh_dir=$?"
                cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ~/.git-credentials 2>/dev/null; echo "cat_creds=$?"
                echo "home_grep=$(grep -rl 'c[a]nary' "$HOME" 2>/dev/null | wc -l)"
                echo "env_planted=$(env | grep -c 'c[a]nary')"
                echo "env_aws=$(env | grep -c AWS_SECRET_ACCESS_KEY)"
                echo "proc_environ_planted=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c 'c[a]nary')"
                echo "forwarded=$AGENTJAIL_IT_FORWARDED"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals(run.home().toString(), o.probe("home"), "HOME inside is the real home path"),
                () -> assertEquals("", o.probe("home_entries").strip(), "the home inside is empty"),
                () -> assertEquals("1", o.probe("ssh_dir"), "~/.ssh inside"),
                () -> assertEquals("1", o.probe("cat_creds"), "reading the planted credential files"),
                () -> assertEquals("0", o.probe("home_grep"), "files under the home holding a canary"),
                () -> assertEquals("0", o.probe("env_planted"), "the agent's environment holds a canary"),
                () -> assertEquals("0", o.probe("env_aws"), "AWS_SECRET_ACCESS_KEY is set inside"),
                () -> assertEquals("0", o.probe("proc_environ_planted"), "a process inside has a canary in environ"),
                () -> assertEquals(FORWARDED, o.probe("forwarded"), "the policy's forwarded variable"));
        assertFalse(o.out().contains(SSH_KEY), o::describe);
        assertFalse(o.out().contains(AWS_SECRET), o::describe);

        String log = new String(AuditLines.bytes(run.auditLog()), StandardCharsets.UTF_8);
        // The script's exec record holds its text, which therefore greps for c[a]nary, not for the word itself.
        assertFalse(log.contains("canary"), () -> "the audit log holds a secret value: " + log);
        JsonNode start = o.only(AuditRecord.KIND_SESSION_START);
        assertTrue(
                start.path("env_names").toString().contains("\"AGENTJAIL_IT_FORWARDED\""),
                () -> "the forwarded variable's name in " + start);
        assertFalse(start.path("env_names").toString().contains("AWS_SECRET_ACCESS_KEY"), start::toString);
        assertEquals(SSH_KEY, Files.readString(run.home().resolve(".ssh/id_ed25519")), "the host's key is untouched");
    }

    @Test
    void anAuditLogInsideTheProjectIsNeitherReadableNorWritableInside() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path log = run.project().resolve("logs/audit.jsonl");
        Files.createDirectories(log.getParent());
        run.auditLog(log);

        AgentjailRun.Outcome o = run.bash("""
                echo "read=$(grep -c session-start logs/audit.jsonl 2>/dev/null)"
                echo '{"v":1,"kind":"forged"}' >> logs/audit.jsonl 2>/dev/null; echo "append=$?"
                """);

        if (AgentjailRun.SETUP_EXIT_CODES.contains(o.exitCode()) && o.probes().isEmpty()) {
            return; // refusing to start is an acceptable answer too
        }
        assertEquals(0, o.exitCode(), o::describe);
        String text = new String(AuditLines.bytes(log), StandardCharsets.UTF_8);
        assertAll(
                () -> assertTrue(
                        o.probe("read").isEmpty() || o.probe("read").equals("0"),
                        () -> "the agent read its own session's audit record from " + log
                                + " (issue 3: the audit log is never visible unless the policy names it); "
                                + o.describe()),
                () -> assertFalse(
                        text.contains("forged"),
                        () -> "the agent appended a forged record to the audit log " + log + ": " + text));
    }

    private static void plant(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
    }
}
