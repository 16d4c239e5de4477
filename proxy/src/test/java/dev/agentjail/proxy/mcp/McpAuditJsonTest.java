package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.McpDetails;
import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@code mcp} object of an audit line: nested, members omitted like top-level fields, strict JSON. */
class McpAuditJsonTest {
    private static AuditRecord.Builder base() {
        return AuditRecord.builder()
                .ts(Instant.parse("2026-11-30T09:44:07.123Z"))
                .session("s")
                .decision(AuditRecord.DENY)
                .reason(McpErrors.REASON_TOOL_NOT_APPROVED)
                .tls(AuditRecord.TLS_NONE);
    }

    @Test
    void writesTheNestedObject() throws Exception {
        String line = AuditJson.toLine(
                base().mcp(new McpDetails("docs", "tools/call", "delete_repo", "7", 12, 0, List.of(), List.of(), 0))
                        .build());
        Json.Obj o = (Json.Obj) JsonReader.parse(line.strip().getBytes(StandardCharsets.UTF_8));
        assertEquals(
                "{\"server\":\"docs\",\"method\":\"tools/call\",\"tool\":\"delete_repo\",\"id\":\"7\",\"args_bytes\":12}",
                o.get("mcp").text());
    }

    @Test
    void listsCountsAndChangedToolsAndOmitsWhatIsUnknown() throws Exception {
        String line = AuditJson.toLine(
                base().mcp(new McpDetails(null, "tools/list", null, null, -1, 2, List.of("search"), List.of("add"), 1))
                        .build());
        Json.Obj o = (Json.Obj) JsonReader.parse(line.strip().getBytes(StandardCharsets.UTF_8));
        assertEquals(
                "{\"method\":\"tools/list\",\"hidden\":2,\"changed\":[\"search\"],\"flagged\":[\"add\"],\"dropped\":1}",
                o.get("mcp").text());
        String none =
                AuditJson.toLine(base().mcp(new McpDetails(null, null, null, null, -1, 0, List.of(), List.of(), 0))
                        .build());
        assertFalse(none.contains("\"mcp\""), none);
        JsonReader.parse(none.strip().getBytes(StandardCharsets.UTF_8));
    }
}
