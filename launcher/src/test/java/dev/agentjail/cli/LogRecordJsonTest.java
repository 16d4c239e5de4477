package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.ExecDetails;
import dev.agentjail.proxy.audit.FileDetails;
import dev.agentjail.proxy.audit.GapDetails;
import dev.agentjail.proxy.audit.SessionDetails;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LogRecordJsonTest {
    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "{\"a\":1,}                 | invalid JSON at column 8: expected a member name in double quotes",
                "[1,]                       | invalid JSON at column 4: unexpected ']'",
                "{'a':1}                    | invalid JSON at column 2: expected a member name in double quotes",
                "{\"a\":01}                 | invalid JSON at column 7: leading zero in a number",
                "{\"a\":-}                  | invalid JSON at column 7: expected a digit",
                "{\"a\":1.}                 | invalid JSON at column 8: expected a digit after '.'",
                "{\"a\":1e}                 | invalid JSON at column 8: expected a digit in the exponent",
                "{\"a\":+1}                 | invalid JSON at column 6: unexpected '+'",
                "{\"a\":NaN}                | invalid JSON at column 6: unexpected 'N'",
                "{\"a\":tru}                | invalid JSON at column 6: unexpected 't'",
                "{\"a\":\"\\x\"}            | invalid JSON at column 8: invalid escape '\\x'",
                "{\"a\":\"\\u12g4\"}        | invalid JSON at column 11: invalid hex digit in a \\u escape",
                "{\"a\":\"open}             | invalid JSON at column 12: unterminated string",
                "{\"a\":1}{\"b\":2}         | invalid JSON at column 8: unexpected '{' after the JSON value",
                "{\"a\":1,\"a\":2}          | invalid JSON at column 8: duplicate member name \"a\"",
                "{\"a\":1 /* c */}          | invalid JSON at column 8: expected ',' or '}'",
                "{\"a\" 1}                  | invalid JSON at column 6: expected ':'",
                "``                         | invalid JSON at column 1: empty line",
            })
    void refusesWhatRfc8259Refuses(String text, String message) {
        LogRecordException e = assertThrows(LogRecordException.class, () -> LogRecordJson.parse(text));
        assertEquals(message, e.getMessage());
    }

    @Test
    void refusesRawControlCharactersTheByteOrderMarkAndDeepNesting() {
        assertEquals(
                "invalid JSON at column 7: raw control character U+0009 in a string",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parse("{\"a\":\"\t\"}"))
                        .getMessage());
        assertEquals(
                "invalid JSON at column 1: byte order mark before the JSON text",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parse("\uFEFF{}"))
                        .getMessage());
        String deep = "[".repeat(LogRecordJson.MAX_DEPTH + 1) + "]".repeat(LogRecordJson.MAX_DEPTH + 1);
        assertEquals(
                "invalid JSON at column " + (LogRecordJson.MAX_DEPTH + 1) + ": nested deeper than "
                        + LogRecordJson.MAX_DEPTH + " levels",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parse(deep))
                        .getMessage());
    }

    @Test
    void parsesEveryValueTheRfcAllows() throws LogRecordException {
        Object v = LogRecordJson.parse(
                " \t{\"s\":\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\\ud800x\",\"n\":[0,-1,12.5,1E+2,"
                        + "99999999999999999999],\"t\":true,\"f\":false,\"z\":null,\"o\":{},\"e\":[]}\r ");
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("s", "a\"\\/\b\f\n\r\té\uD83D\uDE00\uFFFDx");
        expected.put(
                "n",
                List.of(
                        0L,
                        -1L,
                        new BigDecimal("12.5"),
                        new BigDecimal("1E+2"),
                        new BigDecimal("99999999999999999999")));
        expected.put("t", true);
        expected.put("f", false);
        expected.put("z", LogRecordJson.NULL);
        expected.put("o", Map.of());
        expected.put("e", List.of());
        assertEquals(expected, v);
    }

    @Test
    void writesJsonThatReadsBackAndIsSafeInsideHtml() throws LogRecordException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("text", "</script><!-- \u0000\u001b\u2028 & \"q\" \\ \uD800");
        m.put("n", 5L);
        m.put("list", List.of(true, "x"));
        String plain = LogRecordJson.write(m);
        StringBuilder html = new StringBuilder();
        LogRecordJson.write(html, m, LogRecordJson.Escape.HTML);
        assertEquals(
                "{\"text\":\"</script><!-- \\u0000\\u001b\\u2028 & \\\"q\\\" \\\\ \\ufffd\",\"n\":5,\"list\":[true,\"x\"]}",
                plain);
        assertEquals(
                "{\"text\":\"\\u003c/script\\u003e\\u003c!-- \\u0000\\u001b\\u2028 \\u0026 \\\"q\\\" \\\\ \\ufffd\","
                        + "\"n\":5,\"list\":[true,\"x\"]}",
                html.toString());
        StringBuilder ascii = new StringBuilder();
        LogRecordJson.write(ascii, Map.of("t", "é\uD83D\uDE00<"), LogRecordJson.Escape.ASCII);
        assertEquals("{\"t\":\"\\u00e9\\ud83d\\ude00<\"}", ascii.toString());
        assertEquals(Map.of("t", "é\uD83D\uDE00<"), LogRecordJson.parse(ascii.toString()));
        assertEquals(
                "invalid JSON at column 1: number out of range",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parse("1e99999999999"))
                        .getMessage());
        Map<String, Object> back = new LinkedHashMap<>(m);
        back.put("text", "</script><!-- \u0000\u001b\u2028 & \"q\" \\ \uFFFD");
        assertEquals(back, LogRecordJson.parse(html.toString()));
    }

    @Test
    void recordFieldsMustHaveTheirTypes() {
        String base = "{\"v\":1,\"kind\":\"session-start\",\"ts\":\"2026-11-30T09:44:07.123Z\",\"session\":\"s\","
                + "\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0";
        assertEquals(
                "\"port\" out of range: 70000",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parseRecord(base + ",\"port\":70000}"))
                        .getMessage());
        assertEquals(
                "\"host\" must be a string, found null",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parseRecord(base + ",\"host\":null}"))
                        .getMessage());
        assertEquals(
                "\"redactions[].count\" must be at least 1",
                assertThrows(
                                LogRecordException.class,
                                () -> LogRecordJson.parseRecord(
                                        base + ",\"redactions\":[{\"kind\":\"k\",\"location\":\"body\",\"count\":0}]}"))
                        .getMessage());
        assertEquals(
                "\"mcp\" must be an object",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parseRecord(base + ",\"mcp\":\"x\"}"))
                        .getMessage());
        assertEquals(
                "missing \"session\"",
                assertThrows(
                                LogRecordException.class,
                                () -> LogRecordJson.parseRecord(base.replace(",\"session\":\"s\"", "") + "}"))
                        .getMessage());
        assertEquals(
                "a record must be a JSON object",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parseRecord("[1]"))
                        .getMessage());
    }

    @Test
    void mcpFieldsAreReadNestedOrFlat() throws LogRecordException {
        String base = "{\"v\":1,\"kind\":\"request\",\"ts\":\"2026-11-30T09:44:07.123Z\",\"session\":\"s\","
                + "\"decision\":\"allow\",\"reason\":\"allowed\",\"tls\":\"intercept\",\"bytes_out\":0,\"bytes_in\":0,"
                + "\"duration_ms\":0";
        LogRecord nested = LogRecordJson.parseRecord(
                base + ",\"mcp\":{\"server\":\"github\",\"method\":\"tools/call\",\"tool\":\"create_issue\"}}");
        assertEquals(new LogRecord.Mcp("github", "tools/call", "create_issue"), nested.mcp());
        assertEquals("github/create_issue", nested.mcp().toolLabel());
        LogRecord flat = LogRecordJson.parseRecord(base + ",\"mcp.method\":\"tools/list\"}");
        assertEquals(new LogRecord.Mcp(null, "tools/list", null), flat.mcp());
        assertEquals(null, flat.mcpTool());
    }

    @Test
    void execFileAndGapRecordsReadBackAsTheWriterWroteThem() throws LogRecordException {
        Instant ts = Instant.parse("2026-12-02T20:11:07.123Z");
        LogRecord exec = LogRecordJson.parseRecord(AuditJson.toLine(AuditRecord.builder()
                        .kind(AuditRecord.KIND_EXEC)
                        .ts(ts)
                        .session("s")
                        .exec(new ExecDetails(
                                "/usr/bin/mv", List.of("mv", "a b", ""), true, "/home/u/proj", 7, 3, 1000, 4, true))
                        .build())
                .strip());
        assertEquals(
                new LogRecord.Exec("/usr/bin/mv", List.of("mv", "a b", ""), true, "/home/u/proj", 7, 3, 1000, 4, true),
                exec.exec());
        assertTrue(exec.isExec());

        LogRecord file = LogRecordJson.parseRecord(AuditJson.toLine(AuditRecord.builder()
                        .kind(AuditRecord.KIND_FILE)
                        .ts(ts)
                        .session("s")
                        .file(new FileDetails("write", "build/", null, List.of("create"), 9, 120, 40, false))
                        .build())
                .strip());
        assertEquals(
                new LogRecord.FileChange("write", "build/", null, List.of("create"), 9, 120, 40, false), file.file());
        assertTrue(file.file().folded());
        LogRecord rename = LogRecordJson.parseRecord(AuditJson.toLine(AuditRecord.builder()
                        .kind(AuditRecord.KIND_FILE)
                        .ts(ts)
                        .session("s")
                        .file(new FileDetails("rename", "a", "b", null, 7, 1, 1, true))
                        .build())
                .strip());
        assertEquals(new LogRecord.FileChange("rename", "a", "b", List.of(), 7, 1, 1, true), rename.file());
        assertFalse(rename.file().folded());

        LogRecord gap = LogRecordJson.parseRecord(AuditJson.toLine(AuditRecord.builder()
                        .kind(AuditRecord.KIND_AUDIT_GAP)
                        .ts(ts)
                        .session("s")
                        .reason("audit-supervisor-stopped")
                        .error("EOF")
                        .gap(new GapDetails(12, true))
                        .build())
                .strip());
        assertEquals(new LogRecord.Gap(12, true), gap.gap());
        assertEquals("audit-supervisor-stopped", gap.reason());

        LogRecord end = LogRecordJson.parseRecord(AuditJson.toLine(AuditRecord.builder()
                        .kind(AuditRecord.KIND_SESSION_END)
                        .ts(ts)
                        .session("s")
                        .sessionDetails(SessionDetails.end(0, 3, 1).withActivity(214L, 37L))
                        .build())
                .strip());
        assertEquals(214L, end.sessionInfo().programs());
        assertEquals(37L, end.sessionInfo().filesChanged());
        LogRecord off = LogRecordJson.parseRecord(AuditJson.toLine(AuditRecord.builder()
                        .kind(AuditRecord.KIND_SESSION_END)
                        .ts(ts)
                        .session("s")
                        .sessionDetails(SessionDetails.end(0, 3, 1))
                        .build())
                .strip());
        assertNull(off.sessionInfo().programs(), "auditing off: no count");
        assertNull(off.sessionInfo().filesChanged());
    }

    @Test
    void execFileAndGapRecordsNeedTheirObjectOfTheRightTypes() {
        String base = "{\"v\":1,\"ts\":\"2026-11-30T09:44:07.123Z\",\"session\":\"s\","
                + "\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0";
        assertEquals(
                "an exec record needs \"exec\"",
                assertThrows(LogRecordException.class, () -> LogRecordJson.parseRecord(base + ",\"kind\":\"exec\"}"))
                        .getMessage());
        assertEquals(
                "missing \"file.op\"",
                assertThrows(
                                LogRecordException.class,
                                () -> LogRecordJson.parseRecord(
                                        base + ",\"kind\":\"file\",\"file\":{\"path\":\"a\",\"pid\":1,\"count\":1}}"))
                        .getMessage());
        assertEquals(
                "\"exec.racy\" must be a boolean, found a string",
                assertThrows(
                                LogRecordException.class,
                                () -> LogRecordJson.parseRecord(base
                                        + ",\"kind\":\"exec\",\"exec\":{\"path\":\"/bin/x\",\"argv\":[],\"pid\":1,"
                                        + "\"ppid\":0,\"count\":1,\"racy\":\"yes\"}}"))
                        .getMessage());
        assertEquals(
                "\"gap\" must be an object, found an integer",
                assertThrows(
                                LogRecordException.class,
                                () -> LogRecordJson.parseRecord(base + ",\"kind\":\"audit-gap\",\"gap\":3}"))
                        .getMessage());
    }
}
