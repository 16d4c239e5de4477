package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A WebSocket relay's counts where records are read: {@code log tail}, {@code log summary}, the HTML report and the
 * session summary. The log is a real session's (ProxyWebSocketTest: a CONNECT, an upgrade, three messages each way
 * with a GitHub token redacted in one) and a second connection the proxy closed for a binary message with a token.
 */
class WebSocketRecordsTest {
    static final String LOG = "websocket-session.jsonl";

    @Test
    void theCountsAreReadAsAnObjectOrAsFlatNamesAndNothingElse() throws Exception {
        String head = "{\"v\":1,\"kind\":\"tunnel-close\",\"ts\":\"2026-12-02T06:10:16.912Z\",\"session\":\"s\","
                + "\"bytes_out\":1,\"bytes_in\":2,\"duration_ms\":3,";
        LogRecord object = LogRecordJson.parseRecord(head + "\"websocket\":{\"messages_out\":12,\"messages_in\":30}}");
        assertEquals(new LogRecord.WebSocket(12, 30), object.websocket());
        assertTrue(object.isWebSocket());
        LogRecord flat = LogRecordJson.parseRecord(head + "\"websocket.messages_out\":1,\"websocket.messages_in\":0}");
        assertEquals(new LogRecord.WebSocket(1, 0), flat.websocket());
        assertEquals(
                "\"websocket\" must be an object",
                org.junit.jupiter.api.Assertions.assertThrows(
                                LogRecordException.class, () -> LogRecordJson.parseRecord(head + "\"websocket\":3}"))
                        .getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(
                LogRecordException.class,
                () -> LogRecordJson.parseRecord(head + "\"websocket\":{\"messages_out\":-1,\"messages_in\":0}}"));
        assertEquals(
                null, LogRecordJson.parseRecord(head + "\"tls\":\"tunnel\"}").websocket());
    }

    @Test
    void tailGivesEachConnectionALineWithItsMessagesAndWhatWasRedactedInThem() {
        Path log = LogReaderTestCli.resource(LOG);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "tail", "--color", "never", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(5, lines.size(), r.out());
        assertEquals(
                "2026-12-02T06:10:16.912Z  ALLOW  WS       https://upstream.test:36187/ws  101  out 74B  in 73B"
                        + "  ws 3\u2191 3\u2193 1 redacted: github-pat@websocket-text(1)",
                lines.get(2));
        assertEquals(
                "2026-12-02T06:10:18.500Z  DENY   WS       https://upstream.test:36187/ws  101  out 12B  in 0B"
                        + "  reason websocket-secret-blocked  ws 1\u2191 0\u2193 1 redacted:"
                        + " github-pat@websocket-binary(1)",
                lines.get(4));

        LogReaderTestCli.Run deny = LogReaderTestCli.run("log", "tail", "--color", "never", "--deny", log.toString());
        assertEquals(List.of(lines.get(4)), deny.out().lines().toList());
    }

    @Test
    void summaryCountsConnectionsMessagesAndTheSecretsRedactedInThem() {
        Path log = LogReaderTestCli.resource(LOG);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "summary", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(
                "HOST           REQUESTS  DENIED  ERRORS  SENT  RECEIVED  REDACTED  WS  WS MESSAGES  MCP TOOLS",
                lines.get(2));
        assertEquals(
                "upstream.test         3       0       0  86 B      73 B         2   2        4\u2191 3\u2193  -",
                lines.get(3));
        assertTrue(lines.get(4).startsWith("TOTAL "), r.out());
    }

    @Test
    void theReportShowsWebSocketCardsAndCountsMessageRedactionsByKind() throws Exception {
        ReportData data = new ReportData();
        LogReader.forEach(List.of(LogReaderTestCli.resource(LOG)), LogReader.fail(), data::add);
        String html = ReportHtml.render(data, List.of(Path.of("audit.jsonl")));
        assertTrue(html.contains("<div class=\"n\">2</div><div class=\"l\">WebSocket connections</div>"), html);
        assertTrue(
                html.contains("<div class=\"n\">4\u2191 3\u2193</div><div class=\"l\">WebSocket messages sent,"
                        + " received</div>"),
                html);
        Map<String, Object> json = data.toJson();
        assertEquals(List.of(Map.of("key", "github-pat", "value", 2L)), json.get("redactions"));
        assertEquals(Map.of("connections", 2L, "messages_out", 4L, "messages_in", 3L), json.get("websocket"));
    }

    @Test
    void theSessionSummaryCountsConnectionsAndMessages() throws Exception {
        Path log = LogReaderTestCli.resource(LOG);
        StringWriter err = new StringWriter();
        SessionSummary.print(new PrintWriter(err, true), "test-session", log, 3, 0);
        assertEquals(
                "agentjail: session test-session: 3 requests, 0 denied, 2 secrets redacted; audit log " + log + "\n"
                        + "agentjail:   redacted: github-pat (2)\n"
                        + "agentjail:   websocket: 2 connections, 4 messages sent, 3 received\n",
                err.toString());
    }

    @Test
    void theExportsCarryTheCountsInListedFields() throws Exception {
        Path log = LogReaderTestCli.resource(LOG);
        for (String format : List.of("ecs", "ocsf")) {
            LogReaderTestCli.Run r = LogReaderTestCli.run("log", "export", "--format", format, log.toString());
            assertEquals(ExitCodes.OK, r.exitCode(), r.err());
            LogExportFieldList fields = format.equals("ecs") ? LogExportTest.ECS : LogExportTest.OCSF;
            String prefix = format.equals("ecs") ? "agentjail.websocket." : "unmapped.websocket.";
            long connections = 0;
            for (Map<String, Object> doc : LogExportTest.parseLines(r.out())) {
                assertEquals(List.of(), fields.problems(doc), () -> LogRecordJson.write(doc));
                Object out = LogExportTest.at(doc, prefix + "messages_out");
                if (out != null) {
                    connections++;
                    assertTrue(LogExportTest.at(doc, prefix + "messages_in") != null, format);
                }
            }
            assertEquals(2, connections, format + ": both connections carry their counts");
        }
    }
}
