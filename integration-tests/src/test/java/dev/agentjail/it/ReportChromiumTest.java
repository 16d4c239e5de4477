package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.it.support.ProxyProcess;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.RedactionCount;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentjail report} as a browser shows it: the page is rendered by headless Chromium (Debian's chromium
 * package) with its Content-Security-Policy in force, and the DOM after the page's script ran must hold one bar per
 * count, carrying the right numbers, for every chart; markup in the log's hosts, paths, reasons, rules, redaction
 * kinds and MCP tools must stay text (no element, no script run).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ReportChromiumTest {
    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    static final String HOSTILE_HOST = "<img src=x onerror=\"document.body.setAttribute('data-pwned','host')\">.test";
    static final String HOSTILE_PATH = "/</script><script>document.body.setAttribute('data-pwned','path')</script>";
    static final String HOSTILE_TOOL = "\"><svg onload=\"document.body.setAttribute('data-pwned','tool')\">";
    static final Pattern ATTRIBUTE = Pattern.compile("([a-zA-Z:-]+)=\"([^\"]*)\"");

    @TempDir
    Path dir;

    @Test
    void chromiumDrawsEveryChartWithTheLogsNumbersAndRunsNothingFromTheLog() throws Exception {
        Prerequisites.require(CHROMIUM);
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, sampleLog());
        Path html = dir.resolve("report.html");
        Command.Result report =
                ProxyProcess.runCli(Duration.ofSeconds(60), "report", log.toString(), "-o", html.toString());
        assertEquals(0, report.exitCode(), report::describe);

        String dom = dumpDom(html);
        assertTrue(
                attributes(dom, "body").stream().anyMatch(a -> "true".equals(a.get("data-rendered"))),
                "the page's script ran to its end under the page's CSP: " + abbreviate(dom));
        List<Map<String, String>> bars = attributes(dom, "rect").stream()
                .filter(a -> "bar".equals(a.get("class")))
                .toList();

        assertEquals(Map.of("allow", 8L, "deny", 3L, "error", 1L), values(bars, "decisions", "data-key"));
        assertEquals(
                Map.of("a.test", 5L, "b.test", 2L, "mcp.test", 3L, HOSTILE_HOST, 1L, "(no host)", 1L),
                values(bars, "time", "data-host"),
                "requests over time, summed per host");
        assertEquals(
                Map.of("a.test", 300L, "b.test", 10_000L, "mcp.test", 0L, HOSTILE_HOST, 0L, "(no host)", 0L),
                values(bars(bars, "bytes", "sent"), "bytes", "data-key"));
        assertEquals(
                Map.of("a.test", 3000L, "b.test", 100L, "mcp.test", 30L, HOSTILE_HOST, 0L, "(no host)", 0L),
                values(bars(bars, "bytes", "received"), "bytes", "data-key"));
        assertEquals(Map.of("github-pat", 3L, "known:TOKEN", 1L), values(bars, "redactions", "data-key"));
        assertEquals(Map.of("read_file", 2L, "fs/write_file", 1L, HOSTILE_TOOL, 1L), values(bars, "mcp", "data-key"));
        assertEquals(
                5,
                attributes(dom, "li").stream()
                        .filter(a -> a.containsKey("data-host"))
                        .count(),
                "one legend entry per host");

        assertFalse(dom.contains("data-pwned=\""), "no script from the log ran");
        assertFalse(dom.contains("<img"), "no element from the log");
        assertEquals(5, count(dom, "<svg class=\"chart\""), "five charts drawn by the page's own script");
        int rows = count(dom.substring(dom.indexOf("<tbody>")), "<tr>");
        assertEquals(3, rows, "one table row per denial");
        assertTrue(
                dom.contains("&lt;/script&gt;&lt;script&gt;document.body.setAttribute('data-pwned','path')"),
                "the hostile path shows as text");
    }

    /** 12 requests: 8 allowed, 3 denied, 1 malformed; bytes, redactions and MCP tools as asserted above. */
    static String sampleLog() {
        StringBuilder log = new StringBuilder();
        for (int s : new int[] {0, 30, 70}) {
            log.append(line(request(s, "a.test", "allow")
                    .method("GET")
                    .path("/p")
                    .bytesOut(100)
                    .bytesIn(1000)));
        }
        for (int s : new int[] {10, 80}) {
            log.append(line(request(s, "a.test", "deny").method("GET").path("/secret")));
        }
        log.append(line(request(20, "b.test", "allow")
                .method("POST")
                .path("/up")
                .bytesOut(5000)
                .bytesIn(50)
                .redactions(List.of(new RedactionCount("github-pat", "body", 1)))));
        log.append(line(request(90, "b.test", "allow")
                .method("POST")
                .path("/up")
                .bytesOut(5000)
                .bytesIn(50)
                .redactions(List.of(new RedactionCount("github-pat", "header:authorization", 2)))));
        log.append(mcp(
                line(request(40, "mcp.test", "allow")
                        .method("POST")
                        .path("/mcp")
                        .bytesIn(10)),
                "{\"method\":\"tools/call\",\"tool\":\"read_file\"}"));
        log.append(mcp(
                line(request(41, "mcp.test", "allow")
                        .method("POST")
                        .path("/mcp")
                        .bytesIn(10)),
                "{\"method\":\"tools/call\",\"tool\":\"read_file\"}"));
        log.append(mcp(
                line(request(42, "mcp.test", "allow")
                        .method("POST")
                        .path("/mcp")
                        .bytesIn(10)
                        .redactions(List.of(new RedactionCount("known:TOKEN", "body", 1)))),
                "{\"server\":\"fs\",\"tool\":\"write_file\"}"));
        log.append(mcp(
                line(request(50, HOSTILE_HOST, "deny")
                        .method("GET")
                        .path(HOSTILE_PATH)
                        .reason("<b>not-in-allowlist</b>")
                        .rule("</td><script>alert(1)</script>")),
                "{\"tool\":" + json(HOSTILE_TOOL) + "}"));
        log.append(line(AuditRecord.builder()
                .ts(T0.plusSeconds(60))
                .session("s1")
                .decision(AuditRecord.ERROR)
                .reason("bad-line-ending")
                .status(400)
                .client("127.0.0.1:4000")));
        return log.toString();
    }

    private static AuditRecord.Builder request(int second, String host, String decision) {
        boolean allow = decision.equals(AuditRecord.ALLOW);
        return AuditRecord.builder()
                .ts(T0.plusSeconds(second))
                .session("s1")
                .decision(decision)
                .reason(allow ? "allowed" : "not-in-allowlist")
                .scheme("https")
                .host(host)
                .port(443)
                .status(allow ? 200 : 403)
                .tls(AuditRecord.TLS_INTERCEPT)
                .client("127.0.0.1:4000");
    }

    private static String line(AuditRecord.Builder b) {
        return AuditJson.toLine(b.build());
    }

    /** Adds an {@code mcp} object to a written line (the proxy's MCP fields come with a later issue). */
    private static String mcp(String line, String mcpJson) {
        return line.substring(0, line.length() - 2) + ",\"mcp\":" + mcpJson + "}\n";
    }

    private static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** The DOM after the page's scripts ran, as headless Chromium serialises it. */
    private String dumpDom(Path html) {
        List<String> argv = new ArrayList<>(List.of(
                CHROMIUM.toString(),
                "--headless",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--user-data-dir=" + dir.resolve("chromium-profile")));
        if (isRoot()) {
            argv.add("--no-sandbox"); // Chromium refuses to run as root with its sandbox.
        }
        argv.add("--dump-dom");
        argv.add(html.toUri().toString());
        Command.Result r = Command.run(Duration.ofSeconds(120), argv, Map.of("HOME", dir.toString()), dir);
        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.out().contains("</html>"), r::describe);
        return r.out();
    }

    /** The attributes of every {@code <tag …>} start tag, entities decoded. */
    static List<Map<String, String>> attributes(String dom, String tag) {
        List<Map<String, String>> all = new ArrayList<>();
        Matcher m = Pattern.compile("<" + tag + "((?:\\s+[a-zA-Z:-]+=\"[^\"]*\")*)\\s*/?>")
                .matcher(dom);
        while (m.find()) {
            Map<String, String> attrs = new LinkedHashMap<>();
            Matcher a = ATTRIBUTE.matcher(m.group(1));
            while (a.find()) {
                attrs.put(a.group(1), unescape(a.group(2)));
            }
            all.add(attrs);
        }
        return all;
    }

    private static List<Map<String, String>> bars(List<Map<String, String>> bars, String chart, String part) {
        return bars.stream()
                .filter(b -> chart.equals(b.get("data-chart")) && part.equals(b.get("data-part")))
                .toList();
    }

    /** The sum of {@code data-value} per {@code keyAttribute} over the bars of {@code chart}. */
    private static Map<String, Long> values(List<Map<String, String>> bars, String chart, String keyAttribute) {
        Map<String, Long> sums = new TreeMap<>();
        for (Map<String, String> b : bars) {
            if (chart.equals(b.get("data-chart"))) {
                sums.merge(b.get(keyAttribute), Long.parseLong(b.get("data-value")), Long::sum);
            }
        }
        return new HashMap<>(sums);
    }

    private static String unescape(String s) {
        return s.replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&nbsp;", "\u00a0")
                .replace("&amp;", "&");
    }

    private static int count(String s, String needle) {
        int n = 0;
        for (int i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }

    private static boolean isRoot() {
        try {
            return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 3000 ? s.substring(0, 3000) + "…" : s;
    }
}
