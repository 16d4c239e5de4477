package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which binds would show the audit log, its rotated files or its lock file to the agent. */
class AuditLogExposureTest {
    @ParameterizedTest(name = "{0} exposes {1}: {2}")
    @CsvSource({
        "/home/u/.local/state/agentjail, /home/u/.local/state/agentjail/audit.jsonl, true",
        "/home/u/.local, /home/u/.local/state/agentjail/audit.jsonl, true",
        "/home/u/.local/state/agentjail/audit.jsonl, /home/u/.local/state/agentjail/audit.jsonl, true",
        "/home/u/.local/state/agentjail/audit.jsonl.1, /home/u/.local/state/agentjail/audit.jsonl, true",
        "/home/u/.local/state/agentjail/.audit.jsonl.lock, /home/u/.local/state/agentjail/audit.jsonl, true",
        "/home/u/.local/state/agentjail/other, /home/u/.local/state/agentjail/audit.jsonl, false",
        "/home/u/.local/state/other, /home/u/.local/state/agentjail/audit.jsonl, false",
        "/home/u/project, /home/u/logs/audit.jsonl, false"
    })
    void bindsThatShowTheLogOrItsSiblings(String bound, String log, boolean exposes) {
        assertEquals(exposes, Session.exposesLog(Path.of(bound), Path.of(log)));
    }
}
