package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditRecord;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Strict JSON (RFC 8259) for the log commands: parses one line into plain values and into a {@link LogRecord}, and
 * writes plain values back.
 *
 * <p>Parsing accepts exactly the RFC's grammar: no comments, no trailing commas, no single quotes, no {@code NaN}, no
 * leading zeros, no raw control characters in strings, no byte order mark, nothing after the value. Beyond the RFC it
 * refuses duplicate member names (two parsers that keep different duplicates would see different records) and nesting
 * deeper than {@value #MAX_DEPTH}. Values are {@code Map<String, Object>} (insertion order), {@code List<Object>},
 * {@code String}, {@code Long} (integers that fit) or {@code BigDecimal}, {@code Boolean}, and {@link #NULL}.
 */
final class LogRecordJson {
    /** JSON {@code null}; a known record field that holds it is an error (the writer omits null fields). */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    static final int MAX_DEPTH = 64;
    private static final int MAX_NUMBER_CHARS = 400;
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final String text;
    private int pos;
    private int depth;

    private LogRecordJson(String text) {
        this.text = text;
    }

    /** Parses one JSON text; the message of the exception names the column (1-based) of the first error. */
    static Object parse(String text) throws LogRecordException {
        LogRecordJson p = new LogRecordJson(text);
        if (!text.isEmpty() && text.charAt(0) == '\uFEFF') {
            throw p.error("byte order mark before the JSON text");
        }
        p.skipWhitespace();
        if (p.pos == text.length()) {
            throw p.error("empty line");
        }
        Object value = p.value();
        p.skipWhitespace();
        if (p.pos != text.length()) {
            throw p.error("unexpected '" + p.describeChar() + "' after the JSON value");
        }
        return value;
    }

    /** Parses one audit log line into a record; unknown fields are ignored, known ones must have their v1 type. */
    static LogRecord parseRecord(String line) throws LogRecordException {
        if (!(parse(line) instanceof Map<?, ?> map)) {
            throw new LogRecordException("a record must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Fields f = new Fields((Map<String, Object>) map);
        long version = f.requiredLong("v");
        if (version != AuditRecord.SCHEMA_VERSION) {
            throw new LogRecordException("unsupported schema version " + version + " (this reader knows v"
                    + AuditRecord.SCHEMA_VERSION + ")");
        }
        String ts = f.requiredString("ts");
        Instant instant;
        try {
            instant = Instant.parse(ts);
        } catch (DateTimeParseException e) {
            throw new LogRecordException("\"ts\" is not an RFC 3339 UTC time: " + LogRecordText.printable(ts));
        }
        LogRecord.SessionInfo info = sessionInfo(f);
        try {
            return new LogRecord(
                    (int) version,
                    f.requiredString("kind"),
                    instant,
                    f.requiredString("session"),
                    f.string("decision"),
                    f.string("reason"),
                    f.string("rule"),
                    f.string("method"),
                    f.string("scheme"),
                    f.string("host"),
                    (int) f.boundedLong("port", 0, 65_535),
                    f.string("path"),
                    (int) f.boundedLong("status", 0, 999),
                    f.requiredLong("bytes_out"),
                    f.requiredLong("bytes_in"),
                    f.requiredLong("duration_ms"),
                    f.string("tls"),
                    f.string("client"),
                    f.string("resolved_ip"),
                    f.string("error"),
                    f.string("first_bytes_sha256"),
                    redactions(f),
                    mcp(f),
                    webSocket(f),
                    exec(f),
                    file(f),
                    gap(f),
                    info,
                    f.has("seq") ? OptionalLong.of(f.requiredLong("seq")) : OptionalLong.empty());
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new LogRecordException(e.getMessage());
        }
    }

    /** The value as JSON text, escaping as the audit writer does ({@link Escape#CONTROLS}). */
    static String write(Object value) {
        StringBuilder out = new StringBuilder(256);
        write(out, value, Escape.CONTROLS);
        return out.toString();
    }

    /** How much {@link #write(StringBuilder, Object, Escape)} escapes beyond what JSON needs. */
    enum Escape {
        /** The C0 and C1 controls, DEL, U+2028/U+2029 and lone surrogates (as {@code \\ufffd}), as the audit writer does. */
        CONTROLS,
        /** Also {@code <}, {@code >} and {@code &}: the text can sit in an HTML {@code <script>} element. */
        HTML,
        /** Also everything outside ASCII (not {@code <>&}): the text survives any output encoding unchanged. */
        ASCII
    }

    /** Appends {@code value} as JSON; maps become objects in their iteration order, {@link #NULL} is {@code null}. */
    static void write(StringBuilder out, Object value, Escape escape) {
        if (value == null || value == NULL) {
            out.append("null");
        } else if (value instanceof String s) {
            writeString(out, s, escape);
        } else if (value instanceof Long || value instanceof Integer || value instanceof BigDecimal) {
            out.append(value);
        } else if (value instanceof Boolean b) {
            out.append(b.booleanValue());
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                writeString(out, (String) e.getKey(), escape);
                out.append(':');
                write(out, e.getValue(), escape);
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(out, list.get(i), escape);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException(
                    "not a JSON value: " + value.getClass().getName());
        }
    }

    private static void writeString(StringBuilder out, String s, Escape escape) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean pair =
                    Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029') {
                unicodeEscape(out, c);
            } else if (escape == Escape.HTML && (c == '<' || c == '>' || c == '&')) {
                unicodeEscape(out, c);
            } else if (pair) {
                char low = s.charAt(++i);
                if (escape == Escape.ASCII) {
                    unicodeEscape(out, c);
                    unicodeEscape(out, low);
                } else {
                    out.append(c).append(low);
                }
            } else if (Character.isSurrogate(c)) {
                unicodeEscape(out, '\uFFFD');
            } else if (escape == Escape.ASCII && c > 0x7f) {
                unicodeEscape(out, c);
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    private static void unicodeEscape(StringBuilder out, char c) {
        out.append("\\u")
                .append(HEX[(c >> 12) & 0xf])
                .append(HEX[(c >> 8) & 0xf])
                .append(HEX[(c >> 4) & 0xf])
                .append(HEX[c & 0xf]);
    }

    private static List<LogRecord.Redaction> redactions(Fields f) throws LogRecordException {
        List<LogRecord.Redaction> list = new ArrayList<>();
        for (Object item : f.list("redactions")) {
            if (!(item instanceof Map<?, ?> m)) {
                throw new LogRecordException("\"redactions\" must hold objects");
            }
            @SuppressWarnings("unchecked")
            Fields r = new Fields((Map<String, Object>) m, "redactions[].");
            long count = r.requiredLong("count");
            if (count < 1) {
                throw new LogRecordException("\"redactions[].count\" must be at least 1");
            }
            list.add(new LogRecord.Redaction(r.requiredString("kind"), r.requiredString("location"), count));
        }
        return list;
    }

    /**
     * A WebSocket relay's counts: a {@code "websocket"} object with {@code messages_out} and {@code messages_in}, or the
     * flat names {@code websocket.messages_out} and {@code websocket.messages_in}.
     */
    private static LogRecord.WebSocket webSocket(Fields f) throws LogRecordException {
        if (f.has("websocket.messages_out") || f.has("websocket.messages_in")) {
            return new LogRecord.WebSocket(
                    f.requiredLong("websocket.messages_out"), f.requiredLong("websocket.messages_in"));
        }
        if (!f.has("websocket")) {
            return null;
        }
        if (!(f.raw("websocket") instanceof Map<?, ?> m)) {
            throw new LogRecordException("\"websocket\" must be an object");
        }
        @SuppressWarnings("unchecked")
        Fields wf = new Fields((Map<String, Object>) m, "websocket.");
        return new LogRecord.WebSocket(wf.requiredLong("messages_out"), wf.requiredLong("messages_in"));
    }

    /** The {@code "exec"} object of an exec record (docs/audit-log.md "Inside the jail"), or null without one. */
    private static LogRecord.Exec exec(Fields f) throws LogRecordException {
        Fields e = f.object("exec");
        if (e == null) {
            return null;
        }
        return new LogRecord.Exec(
                e.requiredString("path"),
                e.strings("argv") == null ? List.of() : e.strings("argv"),
                e.bool("argv_truncated"),
                e.string("cwd"),
                e.boundedLong("pid", 0, Integer.MAX_VALUE),
                e.boundedLong("ppid", 0, Integer.MAX_VALUE),
                e.has("uid") ? e.requiredLong("uid") : 0,
                e.requiredLong("count"),
                e.bool("racy"),
                e.has("commands") ? e.requiredLong("commands") : 1,
                e.bool("missing"),
                e.bool("escaped"));
    }

    /** The {@code "file"} object of a file record, or null without one. */
    private static LogRecord.FileChange file(Fields f) throws LogRecordException {
        Fields c = f.object("file");
        if (c == null) {
            return null;
        }
        return new LogRecord.FileChange(
                c.requiredString("op"),
                c.requiredString("path"),
                c.string("target"),
                c.strings("flags"),
                c.boundedLong("pid", 0, Integer.MAX_VALUE),
                c.requiredLong("count"),
                c.has("paths") ? c.requiredLong("paths") : 1,
                c.bool("racy"),
                c.bool("escaped"));
    }

    /** The {@code "gap"} object of an audit-gap record, or null without one. */
    private static LogRecord.Gap gap(Fields f) throws LogRecordException {
        Fields g = f.object("gap");
        if (g == null) {
            return null;
        }
        return new LogRecord.Gap(g.has("missed") ? g.requiredLong("missed") : 0, g.bool("stopped"));
    }

    /** The MCP fields: an {@code "mcp"} object, or the flat names {@code mcp.server}, {@code mcp.method}, … */
    private static LogRecord.Mcp mcp(Fields f) throws LogRecordException {
        String server = f.string("mcp.server");
        String method = f.string("mcp.method");
        String tool = f.string("mcp.tool");
        if (f.has("mcp")) {
            if (!(f.raw("mcp") instanceof Map<?, ?> m)) {
                throw new LogRecordException("\"mcp\" must be an object");
            }
            @SuppressWarnings("unchecked")
            Fields mf = new Fields((Map<String, Object>) m, "mcp.");
            server = server != null ? server : mf.string("server");
            method = method != null ? method : mf.string("method");
            tool = tool != null ? tool : mf.string("tool");
        }
        return server == null && method == null && tool == null ? null : new LogRecord.Mcp(server, method, tool);
    }

    private static LogRecord.SessionInfo sessionInfo(Fields f) throws LogRecordException {
        String sha = f.string("policy_sha256");
        String source = f.string("policy_source");
        List<String> command = f.strings("command");
        List<String> binds = f.strings("binds");
        List<String> envNames = f.strings("env_names");
        Long exit = f.has("exit_code") ? f.requiredLong("exit_code") : null;
        Long requests = f.has("requests") ? f.requiredLong("requests") : null;
        Long denials = f.has("denials") ? f.requiredLong("denials") : null;
        List<String> limits = f.strings("limits");
        List<String> limitHits = f.strings("limit_hits");
        Long programs = f.has("programs") ? f.requiredLong("programs") : null;
        Long filesChanged = f.has("files_changed") ? f.requiredLong("files_changed") : null;
        if (sha == null
                && source == null
                && command == null
                && binds == null
                && envNames == null
                && exit == null
                && requests == null
                && denials == null
                && limits == null
                && limitHits == null
                && programs == null
                && filesChanged == null) {
            return null;
        }
        return new LogRecord.SessionInfo(
                sha,
                source,
                command,
                binds,
                envNames,
                exit,
                requests,
                denials,
                limits,
                limitHits,
                programs,
                filesChanged);
    }

    // ---- the parser -------------------------------------------------------------------------------------------

    private Object value() throws LogRecordException {
        if (pos >= text.length()) {
            throw error("unexpected end of line");
        }
        char c = text.charAt(pos);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", NULL);
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw error("unexpected '" + describeChar() + "'");
            }
        };
    }

    private Map<String, Object> object() throws LogRecordException {
        enter();
        pos++; // '{'
        Map<String, Object> map = new LinkedHashMap<>();
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            depth--;
            return map;
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                throw error("expected a member name in double quotes");
            }
            int keyAt = pos;
            String key = string();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            Object value = value();
            if (map.putIfAbsent(key, value) != null) {
                pos = keyAt;
                throw error("duplicate member name \"" + LogRecordText.printable(key) + "\"");
            }
            skipWhitespace();
            char c = peek();
            if (c == ',') {
                pos++;
            } else if (c == '}') {
                pos++;
                depth--;
                return map;
            } else {
                throw error("expected ',' or '}'");
            }
        }
    }

    private List<Object> array() throws LogRecordException {
        enter();
        pos++; // '['
        List<Object> list = new ArrayList<>();
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            depth--;
            return list;
        }
        while (true) {
            skipWhitespace();
            list.add(value());
            skipWhitespace();
            char c = peek();
            if (c == ',') {
                pos++;
            } else if (c == ']') {
                pos++;
                depth--;
                return list;
            } else {
                throw error("expected ',' or ']'");
            }
        }
    }

    private String string() throws LogRecordException {
        pos++; // '"'
        StringBuilder sb = null;
        int start = pos;
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos);
            if (c == '"') {
                String s = sb == null
                        ? text.substring(start, pos)
                        : sb.append(text, start, pos).toString();
                pos++;
                return s;
            }
            if (c < 0x20) {
                throw error("raw control character U+" + String.format("%04X", (int) c) + " in a string");
            }
            if (c != '\\') {
                pos++;
                continue;
            }
            if (sb == null) {
                sb = new StringBuilder();
            }
            sb.append(text, start, pos);
            pos++;
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"' -> sb.append('"');
                case '\\' -> sb.append('\\');
                case '/' -> sb.append('/');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> readUnicodeEscape(sb);
                default -> {
                    pos--;
                    throw error("invalid escape '\\" + describeChar() + "'");
                }
            }
            start = pos;
        }
    }

    /** Appends a {@code \\uXXXX} escape (the {@code \\u} already read); a lone surrogate becomes U+FFFD. */
    private void readUnicodeEscape(StringBuilder sb) throws LogRecordException {
        char c = hex4();
        if (Character.isHighSurrogate(c) && text.startsWith("\\u", pos)) {
            int save = pos;
            pos += 2;
            char low = hex4();
            if (Character.isLowSurrogate(low)) {
                sb.append(c).append(low);
                return;
            }
            pos = save;
        }
        sb.append(Character.isSurrogate(c) ? '\uFFFD' : c);
    }

    private char hex4() throws LogRecordException {
        if (pos + 4 > text.length()) {
            throw error("incomplete \\u escape");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            char h = text.charAt(pos + i);
            int d;
            if (h >= '0' && h <= '9') {
                d = h - '0';
            } else if (h >= 'a' && h <= 'f') {
                d = h - 'a' + 10;
            } else if (h >= 'A' && h <= 'F') {
                d = h - 'A' + 10;
            } else {
                pos += i;
                throw error("invalid hex digit in a \\u escape");
            }
            v = (v << 4) | d;
        }
        pos += 4;
        return (char) v;
    }

    private Object number() throws LogRecordException {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        char c = peek();
        if (c == '0') {
            pos++;
            if (isDigit(peek())) {
                throw error("leading zero in a number");
            }
        } else if (c >= '1' && c <= '9') {
            digits();
        } else {
            throw error("expected a digit");
        }
        boolean integer = true;
        if (peek() == '.') {
            integer = false;
            pos++;
            if (!isDigit(peek())) {
                throw error("expected a digit after '.'");
            }
            digits();
        }
        if (peek() == 'e' || peek() == 'E') {
            integer = false;
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!isDigit(peek())) {
                throw error("expected a digit in the exponent");
            }
            digits();
        }
        if (pos - start > MAX_NUMBER_CHARS) {
            pos = start;
            throw error("number longer than " + MAX_NUMBER_CHARS + " characters");
        }
        String token = text.substring(start, pos);
        if (integer && token.length() <= 18) {
            return Long.parseLong(token);
        }
        BigDecimal d;
        try {
            d = new BigDecimal(token);
        } catch (NumberFormatException e) {
            pos = start;
            throw error("number out of range");
        }
        if (integer) {
            try {
                return d.longValueExact();
            } catch (ArithmeticException e) {
                return d;
            }
        }
        return d;
    }

    private void digits() {
        while (isDigit(peek())) {
            pos++;
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private Object literal(String word, Object value) throws LogRecordException {
        if (!text.startsWith(word, pos)) {
            throw error("unexpected '" + describeChar() + "'");
        }
        pos += word.length();
        return value;
    }

    private void enter() throws LogRecordException {
        if (++depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH + " levels");
        }
    }

    private void expect(char c) throws LogRecordException {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private String describeChar() {
        if (pos >= text.length()) {
            return "end of line";
        }
        return LogRecordText.printable(String.valueOf(text.charAt(pos)));
    }

    private LogRecordException error(String message) {
        return new LogRecordException("invalid JSON at column " + (pos + 1) + ": " + message);
    }

    /** Typed access to the members of one object; {@code prefix} names nested objects in messages. */
    private static final class Fields {
        private final Map<String, Object> map;
        private final String prefix;

        Fields(Map<String, Object> map) {
            this(map, "");
        }

        Fields(Map<String, Object> map, String prefix) {
            this.map = map;
            this.prefix = prefix;
        }

        boolean has(String name) {
            return map.containsKey(name);
        }

        Object raw(String name) {
            return map.get(name);
        }

        String string(String name) throws LogRecordException {
            Object v = map.get(name);
            if (v == null) {
                return null;
            }
            if (v instanceof String s) {
                return s;
            }
            throw wrongType(name, "a string", v);
        }

        String requiredString(String name) throws LogRecordException {
            String s = string(name);
            if (s == null) {
                throw missing(name);
            }
            return s;
        }

        long requiredLong(String name) throws LogRecordException {
            Object v = map.get(name);
            if (v == null) {
                throw missing(name);
            }
            if (v instanceof Long l) {
                return l;
            }
            throw wrongType(name, "an integer", v);
        }

        /** A boolean member; absent is {@code false} (the writer omits a false flag). */
        boolean bool(String name) throws LogRecordException {
            Object v = map.get(name);
            if (v == null) {
                return false;
            }
            if (v instanceof Boolean b) {
                return b;
            }
            throw wrongType(name, "a boolean", v);
        }

        /** A nested object's members, or {@code null} when absent; {@code name.} prefixes its messages. */
        Fields object(String name) throws LogRecordException {
            Object v = map.get(name);
            if (v == null) {
                return null;
            }
            if (v instanceof Map<?, ?> m) {
                @SuppressWarnings("unchecked")
                Map<String, Object> members = (Map<String, Object>) m;
                return new Fields(members, prefix + name + ".");
            }
            throw wrongType(name, "an object", v);
        }

        long boundedLong(String name, long min, long max) throws LogRecordException {
            if (!has(name)) {
                return 0;
            }
            long v = requiredLong(name);
            if (v < min || v > max) {
                throw new LogRecordException("\"" + prefix + name + "\" out of range: " + v);
            }
            return v;
        }

        List<Object> list(String name) throws LogRecordException {
            Object v = map.get(name);
            if (v == null) {
                return List.of();
            }
            if (v instanceof List<?> l) {
                @SuppressWarnings("unchecked")
                List<Object> list = (List<Object>) l;
                return list;
            }
            throw wrongType(name, "an array", v);
        }

        List<String> strings(String name) throws LogRecordException {
            if (!has(name)) {
                return null;
            }
            List<String> out = new ArrayList<>();
            for (Object o : list(name)) {
                if (!(o instanceof String s)) {
                    throw wrongType(name, "an array of strings", o);
                }
                out.add(s);
            }
            return out;
        }

        private LogRecordException missing(String name) {
            return new LogRecordException("missing \"" + prefix + name + "\"");
        }

        private LogRecordException wrongType(String name, String expected, Object found) {
            return new LogRecordException("\"" + prefix + name + "\" must be " + expected + ", found " + kindOf(found));
        }

        private static String kindOf(Object v) {
            if (v == NULL) {
                return "null";
            }
            if (v instanceof String) {
                return "a string";
            }
            if (v instanceof Long) {
                return "an integer";
            }
            if (v instanceof BigDecimal) {
                return "a number";
            }
            if (v instanceof Boolean) {
                return "a boolean";
            }
            if (v instanceof Map) {
                return "an object";
            }
            return "an array";
        }
    }
}
