package dev.agentjail.proxy.audit;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/** Writes an {@link AuditRecord} as one line of JSON in the documented v1 field order. */
public final class AuditJson {

    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private AuditJson() {}

    /** The record as a JSON object followed by {@code \n}; the result is pure JSON text for any field content. */
    public static String toLine(AuditRecord r) {
        StringBuilder out = new StringBuilder(1024);
        out.append("{\"v\":").append(AuditRecord.SCHEMA_VERSION);
        string(out, "kind", r.kind());
        string(out, "ts", formatTs(r.ts()));
        string(out, "session", r.session());
        string(out, "decision", r.decision());
        string(out, "reason", r.reason());
        string(out, "rule", r.rule());
        string(out, "method", r.method());
        string(out, "scheme", r.scheme());
        string(out, "host", r.host());
        positive(out, "port", r.port());
        string(out, "path", r.path());
        positive(out, "status", r.status());
        number(out, "bytes_out", r.bytesOut());
        number(out, "bytes_in", r.bytesIn());
        number(out, "duration_ms", r.durationMs());
        string(out, "tls", r.tls());
        string(out, "client", r.client());
        string(out, "resolved_ip", r.resolvedIp());
        string(out, "error", r.error());
        string(out, "first_bytes_sha256", r.firstBytesSha256());
        if (!r.redactions().isEmpty()) {
            redactions(out, r.redactions());
        }
        if (r.mcp() != null) {
            mcp(out, r.mcp());
        }
        if (r.websocket() != null) {
            out.append(",\"websocket\":{\"messages_out\":")
                    .append(r.websocket().messagesOut())
                    .append(",\"messages_in\":")
                    .append(r.websocket().messagesIn())
                    .append('}');
        }
        if (r.exec() != null) {
            exec(out, r.exec());
        }
        if (r.file() != null) {
            file(out, r.file());
        }
        if (r.gap() != null) {
            out.append(",\"gap\":{\"missed\":").append(r.gap().missed());
            out.append(",\"stopped\":").append(r.gap().stopped()).append('}');
        }
        if (r.sessionDetails() != null) {
            sessionDetails(out, r.sessionDetails());
        }
        return out.append("}\n").toString();
    }

    private static void redactions(StringBuilder out, java.util.List<RedactionCount> list) {
        out.append(",\"redactions\":[");
        for (int i = 0; i < list.size(); i++) {
            RedactionCount c = list.get(i);
            out.append(i > 0 ? ",{" : "{");
            out.append("\"kind\":\"");
            escape(out, c.kind());
            out.append("\",\"location\":\"");
            escape(out, c.location());
            out.append("\",\"count\":").append(c.count()).append('}');
        }
        out.append(']');
    }

    /** The nested {@code "mcp"} object; its members follow the same omission rules as the top level. */
    private static void mcp(StringBuilder out, McpDetails m) {
        int start = out.length();
        out.append(",\"mcp\":{");
        int open = out.length();
        string(out, "server", m.server());
        string(out, "method", m.method());
        string(out, "tool", m.tool());
        string(out, "id", m.id());
        if (m.argsBytes() >= 0) {
            number(out, "args_bytes", m.argsBytes());
        }
        if (m.hidden() > 0) {
            number(out, "hidden", m.hidden());
        }
        if (!m.changed().isEmpty()) {
            strings(out, "changed", m.changed());
        }
        if (!m.flagged().isEmpty()) {
            strings(out, "flagged", m.flagged());
        }
        if (m.dropped() > 0) {
            number(out, "dropped", m.dropped());
        }
        if (out.length() == open) {
            out.setLength(start);
            return;
        }
        // Members were written with a leading comma, as at the top level: drop the first one.
        out.deleteCharAt(open);
        out.append('}');
    }

    /** The nested {@code "exec"} object: argv keeps each argument whole up to the record's own bound. */
    private static void exec(StringBuilder out, ExecDetails e) {
        out.append(",\"exec\":{\"path\":\"");
        escape(out, e.path());
        out.append('"');
        out.append(",\"argv\":[");
        for (int i = 0; i < e.argv().size(); i++) {
            out.append(i > 0 ? ",\"" : "\"");
            escape(out, e.argv().get(i));
            out.append('"');
        }
        out.append(']');
        if (e.argvTruncated()) {
            out.append(",\"argv_truncated\":true");
        }
        string(out, "cwd", e.cwd());
        number(out, "pid", e.pid());
        number(out, "ppid", e.ppid());
        number(out, "uid", e.uid());
        number(out, "count", e.count());
        if (e.commands() > 1) {
            number(out, "commands", e.commands());
        }
        if (e.missing()) {
            out.append(",\"missing\":true");
        }
        if (e.racy()) {
            out.append(",\"racy\":true");
        }
        if (e.escaped()) {
            out.append(",\"escaped\":true");
        }
        out.append('}');
    }

    /** The nested {@code "file"} object. */
    private static void file(StringBuilder out, FileDetails f) {
        out.append(",\"file\":{\"op\":\"");
        escape(out, f.op());
        out.append('"');
        string(out, "path", f.path());
        string(out, "target", f.target());
        if (!f.flags().isEmpty()) {
            strings(out, "flags", f.flags());
        }
        number(out, "pid", f.pid());
        number(out, "count", f.count());
        if (f.paths() > 1) {
            number(out, "paths", f.paths());
        }
        if (f.racy()) {
            out.append(",\"racy\":true");
        }
        if (f.escaped()) {
            out.append(",\"escaped\":true");
        }
        out.append('}');
    }

    private static void sessionDetails(StringBuilder out, SessionDetails d) {
        string(out, "policy_sha256", d.policySha256());
        string(out, "policy_source", d.policySource());
        strings(out, "command", d.command());
        strings(out, "binds", d.binds());
        strings(out, "env_names", d.envNames());
        if (d.exitCode() != null) {
            number(out, "exit_code", d.exitCode());
        }
        if (d.requests() != null) {
            number(out, "requests", d.requests());
            number(out, "denials", d.denials());
        }
        strings(out, "surfaces", d.surfaces());
        strings(out, "limits", d.limits());
        strings(out, "limit_hits", d.limitHits());
        if (d.programs() != null) {
            number(out, "programs", d.programs());
        }
        if (d.filesChanged() != null) {
            number(out, "files_changed", d.filesChanged());
        }
    }

    private static void strings(StringBuilder out, String name, java.util.List<String> values) {
        if (values == null) {
            return;
        }
        out.append(",\"").append(name).append("\":[");
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append('"');
            escape(out, AuditRecord.bound(values.get(i), AuditRecord.MAX_FIELD_CHARS));
            out.append('"');
        }
        out.append(']');
    }

    /** A second as {@link #TS} formats it, but for its milliseconds: records of the same second share it. */
    private record Second(long epochSecond, String text) {}

    private static volatile Second lastSecond = new Second(Long.MIN_VALUE, "");

    /** RFC 3339 in UTC with exactly three fraction digits, e.g. {@code 2026-11-30T09:44:07.123Z}. */
    static String formatTs(Instant ts) {
        Second second = lastSecond;
        if (second.epochSecond() != ts.getEpochSecond()) {
            second = new Second(ts.getEpochSecond(), TS.format(ts.truncatedTo(ChronoUnit.SECONDS)));
            lastSecond = second;
        }
        String text = second.text();
        int millis = ts.getNano() / 1_000_000;
        // "….000Z": the formatter's text of the whole second, its digits of milliseconds replaced.
        StringBuilder out = new StringBuilder(text.length());
        out.append(text, 0, text.length() - 4);
        out.append((char) ('0' + millis / 100))
                .append((char) ('0' + millis / 10 % 10))
                .append((char) ('0' + millis % 10));
        return out.append('Z').toString();
    }

    /**
     * Escapes {@code value} as the body of a JSON string. Control characters (C0, DEL, C1) become six-character
     * unicode escapes so that reading the log in a terminal cannot replay escape sequences from a request;
     * U+2028/U+2029 are escaped for JavaScript readers; a lone surrogate becomes U+FFFD so the output is always valid
     * UTF-8.
     */
    static void escape(StringBuilder out, String value) {
        // Nearly every value needs no escape: one scan, then one append of the whole text.
        int plain = 0;
        while (plain < value.length()) {
            char c = value.charAt(plain);
            if (c == '"'
                    || c == '\\'
                    || c < 0x20
                    || (c >= 0x7f && c <= 0x9f)
                    || Character.isSurrogate(c)
                    || c == '\u2028'
                    || c == '\u2029') {
                break;
            }
            plain++;
        }
        out.append(value, 0, plain);
        for (int i = plain; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029') {
                unicodeEscape(out, c);
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                out.append(c).append(value.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                unicodeEscape(out, '\uFFFD');
            } else {
                out.append(c);
            }
        }
    }

    private static void unicodeEscape(StringBuilder out, char c) {
        out.append("\\u")
                .append(HEX[(c >> 12) & 0xf])
                .append(HEX[(c >> 8) & 0xf])
                .append(HEX[(c >> 4) & 0xf])
                .append(HEX[c & 0xf]);
    }

    private static void string(StringBuilder out, String name, String value) {
        if (value != null) {
            out.append(",\"").append(name).append("\":\"");
            escape(out, value);
            out.append('"');
        }
    }

    private static void number(StringBuilder out, String name, long value) {
        out.append(",\"").append(name).append("\":").append(value);
    }

    private static void positive(StringBuilder out, String name, int value) {
        if (value > 0) {
            number(out, name, value);
        }
    }
}
