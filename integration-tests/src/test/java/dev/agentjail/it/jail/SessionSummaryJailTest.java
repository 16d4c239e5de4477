package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * When {@code agentjail run} ends it prints a short summary on stderr: the session's requests and denials, the hosts
 * denied most, the secrets redacted, and where the audit log is.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SessionSummaryJailTest {
    @TempDir
    Path dir;

    @Test
    void theSummaryNamesTheDeniedHostsAndTheLog() {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Prerequisites.CURL);
        // The built-in policy allows no network: every request is denied.
        AgentjailRun.Outcome o = AgentjailRun.in(dir).bash("""
                for url in http://denied.test/a http://other.test/b http://denied.test/c; do
                  curl -q -sS -m 20 -o /dev/null "$url"
                done
                exit 0
                """);

        assertEquals(0, o.exitCode(), o::describe);
        String session = o.only(AuditRecord.KIND_SESSION_START).path("session").asText();
        assertTrue(
                o.err()
                        .contains("agentjail: session " + session + ": 3 requests, 3 denied, 0 secrets redacted;"
                                + " audit log " + o.auditLog() + "\n"),
                o::describe);
        assertTrue(o.err().contains("agentjail:   denied: denied.test (2), other.test (1)\n"), o::describe);
    }
}
