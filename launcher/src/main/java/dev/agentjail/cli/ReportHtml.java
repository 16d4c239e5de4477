package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Renders {@link ReportData} as one self-contained HTML page: inline CSS and script (report.css, report.js next to
 * this class), the data as JSON in a non-executed script element, the totals and the denials table as escaped HTML.
 *
 * <p>Hosts and paths come from the agent's requests, so nothing from the log is ever markup: text and attribute
 * values are HTML-escaped, the JSON escapes {@code <}, {@code >} and {@code &}, and the script only sets textContent
 * and attributes. As a second wall, a Content-Security-Policy allows no source but the page's own script and style,
 * by hash: should anything slip through, it cannot run nor load anything.
 */
final class ReportHtml {
    static final String CSS = resource("report.css");
    static final String JS = resource("report.js");

    private ReportHtml() {}

    static String render(ReportData data, List<Path> files) {
        LogSummaryStats stats = data.stats();
        LogSummaryStats.Host total = stats.total();
        StringBuilder h = new StringBuilder(32 * 1024);
        h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        h.append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src '")
                .append(sha256(JS))
                .append("'; style-src '")
                .append(sha256(CSS))
                .append("'\">\n");
        h.append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        h.append("<title>agentjail audit report</title>\n<style>").append(CSS).append("</style>\n</head>\n<body>\n");
        h.append("<h1>agentjail audit report</h1>\n<p class=\"meta\">");
        h.append(escape(files.stream().map(Path::toString).collect(Collectors.joining(", "))));
        if (stats.records() > 0) {
            h.append(" &middot; ")
                    .append(stats.records())
                    .append(" records, ")
                    .append(stats.sessions())
                    .append(stats.sessions() == 1 ? " session" : " sessions")
                    .append(", ")
                    .append(LogRecordText.time(stats.first()))
                    .append(" to ")
                    .append(LogRecordText.time(stats.last()));
        } else {
            h.append(" &middot; no records");
        }
        h.append("</p>\n<noscript><p>The charts need JavaScript; the totals and the tables do not.</p>"
                + "</noscript>\n");
        h.append("<section class=\"totals\">\n");
        card(h, "requests", "requests", Long.toString(total.requests));
        card(h, "allowed", "allowed", Long.toString(total.allowed));
        card(h, "deny", "denied", Long.toString(total.denied));
        card(h, "errors", "errors", Long.toString(total.errors));
        card(h, "sent", "sent", LogRecordText.bytes(total.bytesOut));
        card(h, "received", "received", LogRecordText.bytes(total.bytesIn));
        card(h, "redactions", "secrets redacted", Long.toString(data.redactionCount()));
        card(h, "mcp", "MCP calls", Long.toString(data.mcpCalls()));
        if (total.webSockets > 0) {
            card(h, "websockets", "WebSocket connections", Long.toString(total.webSockets));
            card(h, "websocket-messages", "WebSocket messages sent, received", LogSummary.messages(total));
        }
        if (stats.runs() > 0 || stats.changes() > 0 || stats.gaps() > 0) {
            card(h, "programs", "programs run", Long.toString(stats.runs()));
            card(h, "changes", "file changes", Long.toString(stats.changes()));
            if (stats.gaps() > 0) {
                card(h, "gaps", "audit gaps", Long.toString(stats.gaps()));
            }
        }
        h.append("</section>\n");
        chart(h, "Requests over time, by host", "chart-time");
        h.append("<ul id=\"legend-time\" class=\"legend\"></ul>\n</section>\n");
        chart(h, "Allowed and denied", "chart-decisions");
        h.append("</section>\n");
        chart(h, "Bytes per host (sent, received)", "chart-bytes");
        h.append("</section>\n");
        chart(h, "Redactions by kind", "chart-redactions");
        h.append("</section>\n");
        chart(h, "MCP calls by tool", "chart-mcp");
        h.append("</section>\n");
        denials(h, data);
        commands(h, data);
        files(h, data);
        gaps(h, data);
        h.append("<script type=\"application/json\" id=\"report-data\">");
        LogRecordJson.write(h, data.toJson(), LogRecordJson.Escape.HTML);
        h.append("</script>\n<script>").append(JS).append("</script>\n</body>\n</html>\n");
        return h.toString();
    }

    /** Text for HTML content and double- or single-quoted attribute values. */
    static String escape(String s) {
        StringBuilder out = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /** The CSP source expression of an inline element's content: {@code sha256-<base64>}. */
    static String sha256(String content) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(content.getBytes(StandardCharsets.UTF_8));
            return "sha256-" + Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static void card(StringBuilder h, String cls, String label, String value) {
        h.append("<div class=\"card ")
                .append(cls)
                .append("\" data-total=\"")
                .append(cls)
                .append("\"><div class=\"n\">")
                .append(escape(value))
                .append("</div><div class=\"l\">")
                .append(escape(label))
                .append("</div></div>\n");
    }

    private static void chart(StringBuilder h, String title, String id) {
        h.append("<section>\n<h2>")
                .append(escape(title))
                .append("</h2>\n<div id=\"")
                .append(id)
                .append("\"></div>\n");
    }

    private static void denials(StringBuilder h, ReportData data) {
        h.append("<section>\n<h2>Denials</h2>\n");
        if (data.denials().isEmpty()) {
            h.append("<p class=\"empty\">No request was denied.</p>\n</section>\n");
            return;
        }
        h.append("<table id=\"denials\">\n<thead><tr><th>time</th><th>method</th><th>target</th><th>reason</th>"
                + "<th>rule</th></tr></thead>\n<tbody>\n");
        for (LogRecord r : data.denials()) {
            h.append("<tr><td class=\"time\">")
                    .append(LogRecordText.time(r.ts()))
                    .append("</td><td>")
                    .append(escape(r.method() == null ? "-" : LogRecordText.printable(r.method())))
                    .append("</td><td class=\"target\">")
                    .append(escape(LogTailFormat.target(r)))
                    .append("</td><td class=\"reason\">")
                    .append(escape(r.reason() == null ? "-" : LogRecordText.printable(r.reason())))
                    .append("</td><td>")
                    .append(escape(r.rule() == null ? "-" : LogRecordText.printable(r.rule())))
                    .append("</td></tr>\n");
        }
        h.append("</tbody>\n</table>\n");
        if (data.denialCount() > data.denials().size()) {
            h.append("<p class=\"note\">The first ")
                    .append(data.denials().size())
                    .append(" of ")
                    .append(data.denialCount())
                    .append(" denials.</p>\n");
        }
        h.append("</section>\n");
    }

    /** The programs the jail ran, in log order: time, session, pid and parent, the command line, its directory. */
    private static void commands(StringBuilder h, ReportData data) {
        h.append("<section>\n<h2>Commands run in the jail</h2>\n");
        if (data.commands().isEmpty()) {
            h.append("<p class=\"empty\">No program run was recorded (exec auditing off, or none in these logs).</p>\n"
                    + "</section>\n");
            return;
        }
        h.append("<table id=\"commands\">\n<thead><tr><th>time</th><th>session</th><th>pid</th><th>parent</th>"
                + "<th>command</th><th>directory</th><th>times</th></tr></thead>\n<tbody>\n");
        for (LogRecord r : data.commands()) {
            LogRecord.Exec e = r.exec();
            StringBuilder command = new StringBuilder(LogRecordText.word(e.path()));
            for (String arg : e.argv()) {
                command.append(' ').append(LogRecordText.word(arg));
            }
            if (e.argvTruncated()) {
                command.append(" (arguments cut)");
            }
            if (e.racy()) {
                command.append(" (racy)");
            }
            if (e.commands() > 1) {
                command.append(" (").append(e.commands()).append(" command lines, the first shown)");
            }
            if (e.missing()) {
                command.append(" (not found)");
            }
            if (AuditRecord.DENY.equals(r.decision())) {
                command.append(" (refused: unreadable memory)");
            }
            h.append("<tr><td class=\"time\">")
                    .append(LogRecordText.time(r.ts()))
                    .append("</td><td>")
                    .append(escape(LogRecordText.printable(r.sessionId())))
                    .append("</td><td>")
                    .append(e.pid())
                    .append("</td><td>")
                    .append(e.ppid())
                    .append("</td><td class=\"command\">")
                    .append(escape(command.toString()))
                    .append("</td><td class=\"target\">")
                    .append(escape(e.cwd() == null ? "-" : LogRecordText.printable(e.cwd())))
                    .append("</td><td>")
                    .append(e.count())
                    .append("</td></tr>\n");
        }
        h.append("</tbody>\n</table>\n");
        if (data.commandCount() > data.commands().size()) {
            h.append("<p class=\"note\">The first ")
                    .append(data.commands().size())
                    .append(" of ")
                    .append(data.commandCount())
                    .append(" commands.</p>\n");
        }
        h.append("</section>\n");
    }

    /** Per session, the directories whose files changed, most first, with the changes per operation. */
    private static void files(StringBuilder h, ReportData data) {
        h.append("<section>\n<h2>Files changed in the jail</h2>\n");
        List<String> sessions = data.changingSessions();
        if (sessions.isEmpty()) {
            h.append("<p class=\"empty\">No change to a file was recorded (file auditing off, or none in these"
                    + " logs).</p>\n</section>\n");
            return;
        }
        for (String session : sessions) {
            List<LogSummaryStats.Directory> dirs = data.changes(session);
            h.append("<h3>Session ")
                    .append(escape(LogRecordText.printable(session)))
                    .append("</h3>\n<table class=\"files\">\n<thead><tr><th>directory</th><th>changes</th>"
                            + "<th>operations</th></tr></thead>\n<tbody>\n");
            for (LogSummaryStats.Directory d : dirs.subList(0, Math.min(ReportData.MAX_DIRECTORY_ROWS, dirs.size()))) {
                String ops = d.operations.entrySet().stream()
                        .map(e -> LogRecordText.printable(e.getKey()) + " (" + e.getValue() + ")")
                        .collect(Collectors.joining(", "));
                h.append("<tr><td class=\"target\">")
                        .append(escape(LogRecordText.printable(d.name)))
                        .append("</td><td>")
                        .append(d.changes)
                        .append("</td><td>")
                        .append(escape(ops))
                        .append("</td></tr>\n");
            }
            h.append("</tbody>\n</table>\n");
            if (dirs.size() > ReportData.MAX_DIRECTORY_ROWS) {
                long rest = dirs.subList(ReportData.MAX_DIRECTORY_ROWS, dirs.size()).stream()
                        .mapToLong(d -> d.changes)
                        .sum();
                h.append("<p class=\"note\">")
                        .append(dirs.size() - ReportData.MAX_DIRECTORY_ROWS)
                        .append(" more directories, ")
                        .append(rest)
                        .append(" changes.</p>\n");
            }
        }
        h.append("</section>\n");
    }

    /** The audit-gap records: where the log is missing programs or file changes, and why. */
    private static void gaps(StringBuilder h, ReportData data) {
        if (data.gaps().isEmpty()) {
            return;
        }
        h.append("<section>\n<h2>Audit gaps</h2>\n<table id=\"gaps\">\n<thead><tr><th>time</th><th>session</th>"
                + "<th>reason</th><th>missed</th><th>stopped</th><th>error</th></tr></thead>\n<tbody>\n");
        for (LogRecord r : data.gaps()) {
            h.append("<tr><td class=\"time\">")
                    .append(LogRecordText.time(r.ts()))
                    .append("</td><td>")
                    .append(escape(LogRecordText.printable(r.sessionId())))
                    .append("</td><td class=\"reason\">")
                    .append(escape(r.reason() == null ? "-" : LogRecordText.printable(r.reason())))
                    .append("</td><td>")
                    .append(
                            r.gap().missed() == 0
                                    ? "unknown"
                                    : Long.toString(r.gap().missed()))
                    .append("</td><td>")
                    .append(r.gap().stopped() ? "yes" : "no")
                    .append("</td><td>")
                    .append(escape(r.error() == null ? "-" : LogRecordText.printable(r.error())))
                    .append("</td></tr>\n");
        }
        h.append("</tbody>\n</table>\n</section>\n");
    }

    private static String resource(String name) {
        try (InputStream in = ReportHtml.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name + " next to " + ReportHtml.class);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
