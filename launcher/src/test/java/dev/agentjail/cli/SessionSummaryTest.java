package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.audit.SessionDetails;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionSummaryTest {
    static final String ID = "00112233aabbccdd";
    static final String OTHER = "ffeeddcc99887766";
    static final Instant TS = Instant.parse("2026-11-30T09:44:07.123Z");

    @TempDir
    Path dir;

    @Test
    void namesTheTopDeniedHostsAndTheRedactionsOfThisSessionOnly() throws Exception {
        StringBuilder log = new StringBuilder();
        log.append(line(request(ID, "deny", "before-start.test"))); // an earlier run with this id: not counted
        log.append(line(start(ID)));
        log.append(line(request(OTHER, "deny", "other-session.test")));
        log.append(line(request(ID, "allow", "api.test")));
        log.append(line(redacted(request(ID, "allow", "api.test"), "github-pat", 2)));
        log.append(line(request(ID, "deny", "evil.test")));
        log.append("{\"v\":1,\"kind\":\"request\",\"session\":\"" + ID + "\",\"torn\n");
        log.append(line(redacted(request(ID, "deny", "paste.test"), "known:API_KEY", 1)));
        log.append(line(request(ID, "deny", "evil.test")));
        log.append(line(request(OTHER, "deny", "other-session.test")));
        log.append(line(end(ID)));
        Path file = Files.writeString(dir.resolve("audit.jsonl"), log);

        // The sink counted the torn request too, so the scan sees one request fewer than it looks for and ends at the
        // session-start record, not before the earlier run's record.
        assertEquals(
                "agentjail: session " + ID + ": 6 requests, 3 denied, 3 secrets redacted; audit log " + file + "\n"
                        + "agentjail:   denied: evil.test (2), paste.test (1)\n"
                        + "agentjail:   redacted: github-pat (2), known:API_KEY (1)\n",
                print(file, 6, 3));
    }

    @Test
    void stopsOnceItHasSeenAsManyRequestsAsTheSinkCounted() throws Exception {
        StringBuilder log = new StringBuilder();
        log.append(line(request(ID, "deny", "old.test")));
        log.append(line(request(ID, "deny", "new.test")));
        Path file = Files.writeString(dir.resolve("audit.jsonl"), log);
        assertEquals(
                "agentjail: session " + ID + ": 1 request, 1 denied, 0 secrets redacted; audit log " + file + "\n"
                        + "agentjail:   denied: new.test (1)\n",
                print(file, 1, 1));
    }

    @Test
    void readsAcrossBlocksAndPastAnOverlongLine() throws Exception {
        StringBuilder log = new StringBuilder();
        log.append(line(start(ID)));
        for (int i = 0; i < 5; i++) {
            log.append(line(request(ID, "deny", "h" + i + ".test")));
            for (int j = 0; j < 400; j++) {
                log.append(line(request(OTHER, "deny", "noise.test")));
            }
        }
        // A foreign line longer than the reader's bound, then more of the session.
        log.append("{\"v\":1,\"session\":\"" + ID + "\",\"x\":\"")
                .append("y".repeat(LogReader.MAX_LINE_BYTES + 100))
                .append("\"}\n");
        log.append(line(request(ID, "deny", "h0.test")));
        Path file = Files.writeString(dir.resolve("audit.jsonl"), log);
        assertEquals(
                "agentjail: session " + ID + ": 6 requests, 6 denied, 0 secrets redacted; audit log " + file + "\n"
                        + "agentjail:   denied: h0.test (2), h1.test (1), h2.test (1) and 2 more\n",
                print(file, 6, 6));
    }

    @Test
    void withoutRequestsTheLogIsNotReadAndAnUnreadableLogOnlyLosesTheDetails() {
        Path missing = dir.resolve("missing.jsonl");
        assertEquals(
                "agentjail: session " + ID + ": 0 requests, 0 denied, 0 secrets redacted; audit log " + missing + "\n",
                print(missing, 0, 0));
        String out = print(missing, 2, 1);
        assertEquals(
                "agentjail: session " + ID + ": 2 requests, 1 denied, 0 secrets redacted; audit log " + missing + "\n"
                        + "agentjail:   (no details: cannot read the audit log: " + missing
                        + ": no such file or directory)\n",
                out);
    }

    @Test
    void namesTheProgramsRunAndFilesChangedWhenTheyWereAudited() {
        Path missing = dir.resolve("missing.jsonl");
        String head =
                "agentjail: session " + ID + ": 0 requests, 0 denied, 0 secrets redacted; audit log " + missing + "\n";
        assertEquals(head + "agentjail:   ran 214 programs, changed 37 files\n", activity(missing, 214L, 37L));
        assertEquals(head + "agentjail:   ran 1 program, changed 1 file\n", activity(missing, 1L, 1L));
        assertEquals(head + "agentjail:   ran 0 programs, changed 0 files\n", activity(missing, 0L, 0L));
        assertEquals(head + "agentjail:   ran 3 programs\n", activity(missing, 3L, null), "file auditing off");
        assertEquals(head + "agentjail:   changed 2 files\n", activity(missing, null, 2L), "exec auditing off");
        assertEquals(head, activity(missing, null, null), "auditing off: not a word about it");
        assertEquals(print(missing, 0, 0), activity(missing, null, null), "the older call prints the same");
    }

    @Test
    void namesTheSecretsRedactedFromTheJailsArgumentsAndPaths() {
        Path missing = dir.resolve("missing.jsonl");
        StringWriter text = new StringWriter();
        PrintWriter err = new PrintWriter(text);
        SessionSummary.print(err, ID, missing, 0, 0, 3L, 1L, 2);
        SessionSummary.print(err, ID, missing, 0, 0, 3L, 1L, 1);
        err.flush();
        List<String> jailLines = text.toString()
                .lines()
                .filter(l -> l.startsWith("agentjail:   ran"))
                .toList();
        assertEquals(
                List.of(
                        "agentjail:   ran 3 programs, changed 1 file; 2 secrets redacted from their arguments and paths",
                        "agentjail:   ran 3 programs, changed 1 file; 1 secret redacted from their arguments and paths"),
                jailLines);
    }

    private static String activity(Path log, Long programs, Long filesChanged) {
        StringWriter text = new StringWriter();
        PrintWriter err = new PrintWriter(text);
        SessionSummary.print(err, ID, log, 0, 0, programs, filesChanged);
        err.flush();
        return text.toString();
    }

    private static String print(Path log, long requests, long denials) {
        StringWriter text = new StringWriter();
        PrintWriter err = new PrintWriter(text);
        SessionSummary.print(err, ID, log, requests, denials);
        err.flush();
        return text.toString();
    }

    private static AuditRecord.Builder request(String session, String decision, String host) {
        return AuditRecord.builder()
                .ts(TS)
                .session(session)
                .decision(decision)
                .reason(decision.equals("allow") ? "allowed" : "not-in-allowlist")
                .method("GET")
                .scheme("http")
                .host(host)
                .port(80)
                .path("/")
                .status(decision.equals("allow") ? 200 : 403);
    }

    private static AuditRecord.Builder redacted(AuditRecord.Builder b, String kind, int count) {
        return b.redactions(List.of(new RedactionCount(kind, "body", count)));
    }

    private static AuditRecord.Builder start(String session) {
        return AuditRecord.builder()
                .kind(AuditRecord.KIND_SESSION_START)
                .ts(TS)
                .session(session)
                .sessionDetails(SessionDetails.start(
                        "sha", "built-in deny-all", List.of("sh", "(0 arguments)"), List.of(), List.of()));
    }

    private static AuditRecord.Builder end(String session) {
        return AuditRecord.builder()
                .kind(AuditRecord.KIND_SESSION_END)
                .ts(TS)
                .session(session)
                .sessionDetails(SessionDetails.end(0, 6, 3));
    }

    private static String line(AuditRecord.Builder b) {
        return AuditJson.toLine(b.build());
    }
}
