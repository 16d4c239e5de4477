package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportHtmlTest {
    static final Pattern CSP = Pattern.compile(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src '([^']+)';"
                    + " style-src '([^']+)'\">");

    @TempDir
    Path dir;

    @Test
    void markupFromTheLogStaysText() throws Exception {
        String html = report("report-hostile.jsonl");
        // The page's own elements, and nothing the log could have added.
        assertEquals(2, count(html, "<script"), html);
        assertEquals(2, count(html, "</script"), html);
        assertEquals(1, count(html, "<style"), html);
        assertFalse(html.contains("<img"), html);
        assertFalse(html.contains("<svg"), "the page's SVG is drawn by its script, never written from the log");
        assertFalse(html.contains("<b>"), html);
        assertFalse(html.contains("<!--"), html);
        assertFalse(html.contains("\u2028"), "U+2028 would end a line inside the script");
        assertTrue(
                html.contains(
                        "&lt;/script&gt;&lt;script&gt;document.body.setAttribute(&#39;data-pwned&#39;,&#39;3&#39;)"),
                "the hostile path as text in the denials table");
        assertTrue(html.contains("<td class=\"reason\">&lt;b&gt;bold&lt;/b&gt;</td>"), html);
        assertTrue(html.contains("\\u003cimg src=x onerror="), "the hostile host as escaped JSON in the data");
    }

    @Test
    void theContentSecurityPolicyAllowsExactlyThePagesOwnScriptAndStyle() throws Exception {
        String html = report(LogTailTest.SAMPLE);
        Matcher csp = CSP.matcher(html);
        assertTrue(csp.find(), html);
        String script = between(html, "<script>", "</script>");
        String style = between(html, "<style>", "</style>");
        assertEquals(ReportHtml.sha256(script), csp.group(1));
        assertEquals(ReportHtml.sha256(style), csp.group(2));
        assertFalse(html.contains("http://") && html.contains("src=\"http"), "no external assets");
        assertFalse(html.contains(" style=\""), "inline style attributes would need 'unsafe-inline'");
        assertFalse(html.contains("<link"), "no external stylesheet");
    }

    @Test
    void theEmbeddedDataCountsWhatTheLogHolds() throws Exception {
        String html = report(LogTailTest.SAMPLE);
        @SuppressWarnings("unchecked")
        Map<String, Object> data = (Map<String, Object>) LogRecordJson.parse(
                between(html, "<script type=\"application/json\" id=\"report-data\">", "</script>"));
        assertEquals(
                List.of(
                        Map.of("key", "allow", "value", 8L),
                        Map.of("key", "deny", "value", 4L),
                        Map.of("key", "error", "value", 1L)),
                data.get("decisions"));
        assertEquals(
                List.of(Map.of("key", "github-pat", "value", 2L), Map.of("key", "known:API_KEY", "value", 2L)),
                data.get("redactions"));
        assertEquals(
                List.of(Map.of("key", "github/create_issue", "value", 2L), Map.of("key", "search", "value", 1L)),
                data.get("mcp"));
        @SuppressWarnings("unchecked")
        Map<String, Object> series = (Map<String, Object>) data.get("series");
        assertEquals(5L, series.get("bucketSeconds"), "293 s of requests: 59 buckets of 5 s, 60 at most");
        @SuppressWarnings("unchecked")
        List<List<Long>> counts = (List<List<Long>>) series.get("counts");
        assertEquals(
                13L,
                counts.stream().flatMap(List::stream).mapToLong(Long::longValue).sum());
        assertEquals("2026-11-30T09:44:05.000Z", ((List<?>) series.get("buckets")).get(0), "aligned to 5 s");
        assertTrue(
                html.contains("<tr><td class=\"time\">2026-11-30T09:44:09.000Z</td><td>GET</td>"
                        + "<td class=\"target\">http://metadata.allowed.test/latest/meta-data/</td>"
                        + "<td class=\"reason\">ssrf-link-local</td><td>-</td></tr>"),
                html);
    }

    @Test
    void theCommandWritesTheFileWithMode0600AndNeedsAnOutput() throws Exception {
        Path log = LogReaderTestCli.resource(LogTailTest.SAMPLE);
        Path out = dir.resolve("report.html");
        LogReaderTestCli.Run r = LogReaderTestCli.run("report", log.toString(), "-o", out.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        assertEquals("wrote " + out + ": 13 requests, 4 denied\n", r.out());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        assertTrue(Files.readString(out).startsWith("<!DOCTYPE html>"));
        assertEquals(
                ExitCodes.USAGE, LogReaderTestCli.run("report", log.toString()).exitCode());
    }

    @Test
    void commandsAndFilesChangedAreTablesWithEveryArgumentAndPathEscaped() throws Exception {
        String html = report(LogTailTest.JAIL);
        // The hostile argument and path are text: no element of theirs, no raw control or bidi character.
        assertEquals(2, count(html, "<script"), "only the page's own two script elements");
        assertFalse(html.contains("<img"), html);
        assertFalse(html.contains("\u001b"), html);
        assertFalse(html.contains("\u202e"), html);
        assertTrue(
                html.contains(
                        "<td class=\"command\">&#39;/tmp/evil tool&#39; evil &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;"
                                + " &#39;a b&#39; &#39;\\u001b[31mred\\u202e&#39; &#39;[REDACTED:github-pat]&#39; (arguments cut)"
                                + " (racy)</td>"),
                html);
        assertTrue(html.contains("<td class=\"target\">~/.cache/</td><td>1</td><td>unlink (1)</td>"), html);

        // The timeline: every exec record in log order, with its time, pid and parent.
        String commands = between(html, "<table id=\"commands\">", "</table>");
        assertEquals(6, count(commands, "<tr><td class=\"time\">"), commands);
        assertTrue(
                commands.contains("<tr><td class=\"time\">2026-12-02T20:11:00.520Z</td><td>c0ffee0123456789</td>"
                        + "<td>7</td><td>1</td><td class=\"command\">/usr/bin/mv mv a b</td>"
                        + "<td class=\"target\">/home/u/proj</td><td>1</td></tr>"),
                commands);
        assertTrue(commands.indexOf("/usr/bin/mv mv a b") < commands.indexOf("/usr/bin/ln ln -s x y"), commands);

        // Files changed, per session, by directory and operation.
        assertTrue(html.contains("<h3>Session c0ffee0123456789</h3>"), html);
        String files = between(html, "<table class=\"files\">", "</table>");
        assertTrue(files.contains("<td class=\"target\">(anywhere)</td><td>500</td><td>write (500)</td>"), files);
        assertTrue(
                files.contains("<td class=\"target\">./</td><td>5</td>"
                        + "<td>mkdir (1), rename (1), rmdir (1), symlink (1), write (1)</td>"),
                files);
        assertTrue(files.indexOf("(anywhere)") < files.indexOf("build/"), "most changes first");
        assertTrue(html.contains("<td class=\"reason\">audit-supervisor-behind</td><td>12</td><td>no</td>"), html);
        assertTrue(html.contains("data-total=\"programs\"><div class=\"n\">8</div>"), "runs, counts added up");
        assertTrue(html.contains("data-total=\"changes\"><div class=\"n\">630</div>"), html);
    }

    @Test
    void aLogWithoutExecOrFileRecordsSaysSo() throws Exception {
        String html = report(LogTailTest.SAMPLE);
        assertTrue(html.contains("No program run was recorded"), html);
        assertTrue(html.contains("No change to a file was recorded"), html);
        assertFalse(html.contains("data-total=\"programs\""), html);
    }

    @Test
    void bucketsStayWithinTheLimitForAnySpan() {
        for (long span : new long[] {0, 999, 59_000, 60_000, 3_600_000, 86_400_000L * 400, Long.MAX_VALUE / 4}) {
            long bucketMs = ReportData.bucketSeconds(span) * 1000;
            assertTrue(span / bucketMs + 2 <= ReportData.MAX_BUCKETS, () -> "span " + span);
        }
    }

    private String report(String resource) throws Exception {
        Path out = dir.resolve(resource + ".html");
        LogReaderTestCli.Run r = LogReaderTestCli.run(
                "report", LogReaderTestCli.resource(resource).toString(), "-o", out.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        return Files.readString(out);
    }

    private static String between(String s, String start, String end) {
        int from = s.indexOf(start);
        assertTrue(from >= 0, start);
        from += start.length();
        return s.substring(from, s.indexOf(end, from));
    }

    private static int count(String s, String needle) {
        int n = 0;
        for (int i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }
}
