package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryAuditSinkTest {

    private static final AuditRecord RECORD = AuditRecord.builder()
            .ts(Instant.EPOCH)
            .session("s")
            .decision("deny")
            .reason("r")
            .build();

    @Test
    void failingModeRefusesAndRecordsNothingUntilSwitchedBack() throws Exception {
        MemoryAuditSink sink = new MemoryAuditSink();
        sink.append(RECORD);

        sink.failing(true);
        assertThrows(AuditUnavailableException.class, () -> sink.append(RECORD));
        assertFalse(sink.healthy());

        sink.failing(false);
        sink.append(RECORD);
        assertTrue(sink.healthy());
        assertEquals(List.of(RECORD, RECORD), sink.records());
        assertEquals(AuditJson.toLine(RECORD).stripTrailing(), sink.lines().get(0));
    }

    @Test
    void closedSinkRefuses() {
        MemoryAuditSink sink = new MemoryAuditSink();
        sink.close();

        assertThrows(AuditUnavailableException.class, () -> sink.append(RECORD));
        assertFalse(sink.healthy());
    }
}
