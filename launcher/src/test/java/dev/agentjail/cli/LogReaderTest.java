package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.audit.SessionDetails;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogReaderTest {
    static final String GOOD =
            "{\"v\":1,\"kind\":\"request\",\"ts\":\"2026-11-30T09:44:07.123Z\",\"session\":\"s\",\"decision\":\"allow\","
                    + "\"reason\":\"allowed\",\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0,\"tls\":\"none\"}";

    @TempDir
    Path dir;

    @Test
    void readsBackWhatTheProxysWriterWrites() throws IOException {
        Instant ts = Instant.parse("2026-11-30T09:44:07.123Z");
        AuditRecord request = AuditRecord.builder()
                .ts(ts)
                .session("0123456789abcdef")
                .decision(AuditRecord.DENY)
                .reason("secret-blocked")
                .rule("redaction")
                .method("POST")
                .scheme(AuditRecord.SCHEME_HTTPS)
                .host("api.example.test")
                .port(443)
                .path("/v1/\u001b[2J\u2028\"quoted\"/ü/\uD83D\uDE00")
                .status(403)
                .bytesOut(12)
                .bytesIn(34)
                .durationMs(56)
                .tls(AuditRecord.TLS_INTERCEPT)
                .client("127.0.0.1:5000")
                .resolvedIp("203.0.113.1")
                .error("no")
                .firstBytesSha256("ab")
                .redactions(List.of(new RedactionCount("github-pat", "body", 2)))
                .build();
        AuditRecord start = AuditRecord.builder()
                .kind(AuditRecord.KIND_SESSION_START)
                .ts(ts)
                .session("0123456789abcdef")
                .sessionDetails(SessionDetails.start(
                        "sha",
                        "built-in deny-all",
                        List.of("bash", "(1 arguments)"),
                        List.of("rw /p"),
                        List.of("PATH")))
                .build();
        AuditRecord end = AuditRecord.builder()
                .kind(AuditRecord.KIND_SESSION_END)
                .ts(ts)
                .session("0123456789abcdef")
                .durationMs(9)
                .sessionDetails(SessionDetails.end(3, 7, 2))
                .build();
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, AuditJson.toLine(request) + AuditJson.toLine(start) + AuditJson.toLine(end));

        List<LogRecord> records = readAll(log, new ArrayList<>());
        assertEquals(3, records.size());
        LogRecord r = records.get(0);
        assertEquals(1, r.version());
        assertEquals("request", r.kind());
        assertEquals(ts, r.ts());
        assertEquals("0123456789abcdef", r.sessionId());
        assertEquals("deny", r.decision());
        assertEquals("secret-blocked", r.reason());
        assertEquals("redaction", r.rule());
        assertEquals("POST", r.method());
        assertEquals("https", r.scheme());
        assertEquals("api.example.test", r.host());
        assertEquals(443, r.port());
        assertEquals("/v1/\u001b[2J\u2028\"quoted\"/ü/\uD83D\uDE00", r.path(), "the escapes decode to the original");
        assertEquals(403, r.status());
        assertEquals(12, r.bytesOut());
        assertEquals(34, r.bytesIn());
        assertEquals(56, r.durationMs());
        assertEquals("intercept", r.tls());
        assertEquals("127.0.0.1:5000", r.client());
        assertEquals("203.0.113.1", r.resolvedIp());
        assertEquals("no", r.error());
        assertEquals("ab", r.firstBytesSha256());
        assertEquals(List.of(new LogRecord.Redaction("github-pat", "body", 2)), r.redactions());
        assertNull(r.mcp());
        assertNull(r.sessionInfo());
        assertTrue(r.seq().isEmpty());

        LogRecord.SessionInfo s = records.get(1).sessionInfo();
        assertEquals("sha", s.policySha256());
        assertEquals("built-in deny-all", s.policySource());
        assertEquals(List.of("bash", "(1 arguments)"), s.command());
        assertEquals(List.of("rw /p"), s.binds());
        assertEquals(List.of("PATH"), s.envNames());
        LogRecord.SessionInfo e = records.get(2).sessionInfo();
        assertEquals(3L, e.exitCode());
        assertEquals(7L, e.requests());
        assertEquals(2L, e.denials());
        assertEquals(9, records.get(2).durationMs());
    }

    @Test
    void theHashChainFieldsAndUnknownFieldsAreAcceptedAndIgnored() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(
                log,
                "{\"seq\":41,\"prev_hash\":\"00ff\",\"hmac\":\"ab\"," + GOOD.substring(1) + "\n"
                        + GOOD.replace("}", ",\"later\":{\"nested\":[1,2.5e3,true,false,null]}}") + "\n");
        List<String> problems = new ArrayList<>();
        List<LogRecord> records = readAll(log, problems);
        assertEquals(List.of(), problems);
        assertEquals(2, records.size());
        assertEquals(41, records.get(0).seq().getAsLong());
        assertTrue(records.get(1).seq().isEmpty());
    }

    @Test
    void badLinesAreReportedWithFileAndLineAndSkipped() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        byte[] badUtf8 = GOOD.replace("\"s\"", "\"s\u00ff\"").getBytes(StandardCharsets.ISO_8859_1);
        try (var out = Files.newOutputStream(log)) {
            out.write((GOOD + "\n").getBytes(StandardCharsets.UTF_8)); // 1
            out.write("{\"v\":1,\"kind\":\"requ\n".getBytes(StandardCharsets.UTF_8)); // 2: torn
            out.write("\n".getBytes(StandardCharsets.UTF_8)); // 3: empty
            out.write(badUtf8); // 4
            out.write('\n');
            out.write((GOOD.replace("\"v\":1", "\"v\":2") + "\n").getBytes(StandardCharsets.UTF_8)); // 5
            out.write((GOOD.replace(",\"decision\":\"allow\"", "") + "\n").getBytes(StandardCharsets.UTF_8)); // 6
            out.write((GOOD.replace("\"bytes_in\":0", "\"bytes_in\":\"0\"") + "\n").getBytes(StandardCharsets.UTF_8));
            out.write((GOOD.replace("\"ts\":\"2026-11-30T09:44:07.123Z\"", "\"ts\":\"yesterday\"") + "\n")
                    .getBytes(StandardCharsets.UTF_8)); // 8
            out.write((GOOD + "\n").getBytes(StandardCharsets.UTF_8)); // 9
            out.write(GOOD.substring(0, 20).getBytes(StandardCharsets.UTF_8)); // 10: no newline
        }
        List<String> problems = new ArrayList<>();
        List<LogRecord> records = readAll(log, problems);
        assertEquals(2, records.size());
        assertEquals(
                List.of(
                        log + ":2: invalid JSON at column 20: unterminated string",
                        log + ":3: invalid JSON at column 1: empty line",
                        log + ":4: not valid UTF-8",
                        log + ":5: unsupported schema version 2 (this reader knows v1)",
                        log + ":6: a request record needs \"decision\"",
                        log + ":7: \"bytes_in\" must be an integer, found a string",
                        log + ":8: \"ts\" is not an RFC 3339 UTC time: yesterday",
                        log + ":10: incomplete last line (no newline at its end): a write was cut short or is still"
                                + " in progress"),
                problems);
    }

    @Test
    void anOverlongLineIsSkippedWholeAndReadingGoesOn() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        String huge = GOOD.replace("\"s\"", "\"" + "x".repeat(LogReader.MAX_LINE_BYTES) + "\"");
        Files.writeString(log, GOOD + "\n" + huge + "\n" + GOOD + "\n");
        List<String> problems = new ArrayList<>();
        assertEquals(2, readAll(log, problems).size());
        assertEquals(List.of(log + ":2: line longer than " + LogReader.MAX_LINE_BYTES + " bytes"), problems);
    }

    @Test
    void strictStopsAtTheFirstBadLine() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, GOOD + "\nnot json\n" + GOOD + "\n");
        List<LogRecord> seen = new ArrayList<>();
        CliException e =
                assertThrows(CliException.class, () -> LogReader.forEach(List.of(log), LogReader.fail(), seen::add));
        assertEquals(ExitCodes.FAILURE, e.exitCode());
        assertTrue(e.getMessage().startsWith(log + ":2: invalid JSON at column 1"), e.getMessage());
        assertEquals(1, seen.size());
    }

    @Test
    void aMissingFileIsBadUsageNamingIt() {
        Path missing = dir.resolve("missing.jsonl");
        CliException e =
                assertThrows(CliException.class, () -> LogReader.forEach(List.of(missing), LogReader.fail(), r -> {}));
        assertEquals(ExitCodes.USAGE, e.exitCode());
        assertEquals("cannot read " + missing + ": no such file or directory", e.getMessage());
    }

    static List<LogRecord> readAll(Path log, List<String> problems) {
        List<LogRecord> records = new ArrayList<>();
        LogReader.forEach(List.of(log), p -> problems.add(p.toString()), records::add);
        return records;
    }
}
