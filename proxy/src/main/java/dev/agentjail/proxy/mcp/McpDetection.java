package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import dev.agentjail.proxy.redact.ContentCodingException;
import dev.agentjail.proxy.redact.ContentCodings;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Decides whether a request body sent somewhere that is not an approved MCP endpoint is MCP, reading it as the
 * receiver's parser could: after its {@code Content-Encoding} (gzip, deflate), in the encoding a JSON parser detects
 * (byte order marks, UTF-16 and UTF-32 with or without them, {@link JsonCharset}) and in the declared {@code charset},
 * after leading whitespace, as one message or a batch, and also when the body is framed as server-sent events
 * ({@code data:} lines). A body that is not strict JSON is MCP when its string tokens, escapes decoded, name a {@code
 * jsonrpc} member or an MCP {@code method}: lenient parsers accept duplicate members and the like.
 */
final class McpDetection {
    /** How much of a body is held to look for MCP before it streams on. */
    static final int SNIFF_BYTES = 64 * 1024;

    /** What is known about the body so far. */
    sealed interface Verdict {
        /** Not enough of the body yet: keep holding it. */
        record More() implements Verdict {}

        /** Not MCP in any reading: it goes on. */
        record NotMcp() implements Verdict {}

        /** MCP in some reading: {@code message} is its first message when one could be read (else null). */
        record Mcp(Json.Obj message, String reading) implements Verdict {}
    }

    static final Verdict MORE = new Verdict.More();
    static final Verdict NOT_MCP = new Verdict.NotMcp();

    private static final List<String> SSE_FIELDS = List.of("data:", "event:", "id:", "retry:", ":");

    private final String contentEncoding;
    /** The charsets the {@code Content-Type} could be read to declare, each one more reading. */
    private final List<Charset> declared;
    /**
     * The body is typed as an event stream: a receiver parses it as one whatever its first line (a field it does not
     * know, a line without a colon), so any start that is not JSON is read as events.
     */
    private final boolean eventStream;

    /**
     * {@code contentEncoding}: the request's codings (null or identity: none); {@code contentType}: its type, whose
     * {@code charset} is one more reading, every one a receiver could see in it when it is repeated or malformed.
     */
    McpDetection(String contentEncoding, String contentType) {
        String coding = null;
        try {
            coding = contentEncoding == null || ContentCodings.isIdentity(contentEncoding) ? null : contentEncoding;
        } catch (ContentCodingException e) {
            coding = contentEncoding; // Refused by the redaction step before any body reaches here.
        }
        this.contentEncoding = coding;
        this.declared = JsonCharset.declared(contentType);
        this.eventStream = contentType != null
                && contentType.toLowerCase(java.util.Locale.ROOT).contains("text/event-stream");
    }

    /** Whether the body is compressed: it is decided once complete. */
    boolean decodes() {
        return contentEncoding != null;
    }

    /** Decides on {@code body[0, length)}: the whole body when {@code complete}, else its start. */
    Verdict decide(byte[] body, int length, boolean complete) {
        if (contentEncoding != null) {
            if (!complete) {
                return MORE;
            }
            try {
                body = ContentCodings.decode(
                        contentEncoding, Arrays.copyOf(body, length), ContentCodings.Limits.defaults());
                length = body.length;
            } catch (ContentCodingException e) {
                // The redaction step refuses a body it cannot decode before it gets here; never pass one unread.
                return new Verdict.Mcp(null, contentEncoding + " body that cannot be decoded");
            }
        }
        boolean enough = complete || length >= SNIFF_BYTES;
        if (!complete && JsonCharset.mayBeWide(body, length)) {
            // A JSON parser tells UTF-16 and UTF-32 from UTF-8 by the first four bytes: until then, nothing is decided.
            return MORE;
        }
        if (declared.size() > JsonCharset.MAX_DECLARED) {
            return new Verdict.Mcp(null, "a Content-Type naming more than " + JsonCharset.MAX_DECLARED + " charsets");
        }
        JsonCharset.Detected detected = JsonCharset.detect(body, length);
        List<Verdict> verdicts = new ArrayList<>(1 + declared.size());
        verdicts.add(reading(body, length, detected, enough, complete));
        for (Charset charset : declared) {
            if (!charset.equals(detected.charset())) {
                byte[] utf8 = JsonCharset.toUtf8(body, 0, length, charset);
                verdicts.add(
                        decideUtf8(utf8, utf8.length, enough, complete, "declared " + charset.name(), eventStream));
            }
        }
        Verdict result = NOT_MCP;
        for (Verdict v : verdicts) {
            if (v instanceof Verdict.Mcp) {
                return v;
            }
            if (v instanceof Verdict.More) {
                result = MORE;
            }
        }
        return result;
    }

    /**
     * The scan of the rest of a body whose start {@code body[0, length)} was decided not MCP before the body was
     * complete, in each reading {@link #decide} made of it; null when no reading of the start can go on as JSON or an
     * event stream (or the body is compressed: that is decided once complete).
     */
    McpTail tail(byte[] body, int length) {
        if (contentEncoding != null) {
            return null;
        }
        JsonCharset.Detected detected = JsonCharset.detect(body, length);
        List<Charset> charsets = new ArrayList<>();
        List<String> names = new ArrayList<>();
        charsets.add(detected.charset());
        names.add(detected.charset().name() + (detected.bomLength() > 0 ? " with BOM" : ""));
        for (Charset charset : declared) {
            if (!charset.equals(detected.charset())) {
                charsets.add(charset);
                names.add("declared " + charset.name());
            }
        }
        return McpTail.of(body, length, charsets, detected.bomLength(), names, eventStream);
    }

    private Verdict reading(byte[] body, int length, JsonCharset.Detected detected, boolean enough, boolean complete) {
        String name = detected.charset().name() + (detected.bomLength() > 0 ? " with BOM" : "");
        if (detected.charset().equals(StandardCharsets.UTF_8)) {
            // No copy for the common case; decideUtf8 skips a UTF-8 BOM itself.
            return decideUtf8(body, length, enough, complete, name, eventStream);
        }
        byte[] utf8 = JsonCharset.toUtf8(body, length, detected);
        return decideUtf8(utf8, utf8.length, enough, complete, name, eventStream);
    }

    /** One reading, as UTF-8 in {@code u[0, n)}. */
    private static Verdict decideUtf8(
            byte[] u, int n, boolean enough, boolean complete, String reading, boolean eventStream) {
        int i = 0;
        if (n >= 3 && (u[0] & 0xff) == 0xef && (u[1] & 0xff) == 0xbb && (u[2] & 0xff) == 0xbf) {
            i = 3; // Decoders strip a BOM (Python's utf-8-sig, iconv-lite, fetch's UTF-8 decode).
        }
        i = skipSpace(u, i, n);
        if (i == n) {
            // Only white space so far: a parser reads on. Past the held start, the tail scan follows what comes.
            return enough ? NOT_MCP : MORE;
        }
        if (u[i] == '{' || u[i] == '[') {
            return enough ? json(u, i, n, complete, reading) : MORE;
        }
        int sse = eventStream ? 1 : sseStart(u, i, n);
        if (sse > 0) {
            return enough ? sse(u, i, n, complete, reading) : MORE;
        }
        return sse == 0 && !complete ? MORE : NOT_MCP;
    }

    /** 1 when {@code u[i..]} starts with an SSE field name, 0 when it may (too short to tell), -1 when not. */
    private static int sseStart(byte[] u, int i, int n) {
        boolean maybe = false;
        for (String f : SSE_FIELDS) {
            int k = 0;
            while (k < f.length() && i + k < n && u[i + k] == f.charAt(k)) {
                k++;
            }
            if (k == f.length()) {
                return 1;
            }
            maybe |= i + k == n;
        }
        return maybe ? 0 : -1;
    }

    /** A JSON text in {@code u[from, n)}: the whole of it when {@code complete}, else its start. */
    private static Verdict json(byte[] u, int from, int n, boolean complete, String reading) {
        if (complete) {
            try {
                Json value = JsonReader.parse(u, from, n - from);
                Json.Obj first = mcpMessage(value);
                return first != null ? new Verdict.Mcp(first, reading) : NOT_MCP;
            } catch (JsonException e) {
                return namesMcp(u, from, n, false) ? new Verdict.Mcp(null, reading) : NOT_MCP;
            }
        }
        byte[] start = from == 0 ? u : Arrays.copyOfRange(u, from, n);
        Json.Obj members = JsonReader.prefixMembers(start, n - from);
        if (members != null && (member(members, "jsonrpc") != null || McpGate.isMcpMethod(method(members)))) {
            return new Verdict.Mcp(members, reading);
        }
        // Any later message of a batch, and what a lenient parser reads where the strict one stops.
        return namesMcp(u, from, n, true) ? new Verdict.Mcp(null, reading) : NOT_MCP;
    }

    /** A body framed as an event stream: the data of each event, as a receiver would join its lines, is checked. */
    private static Verdict sse(byte[] u, int from, int n, boolean complete, String reading) {
        StringBuilder data = new StringBuilder();
        boolean hasData = false;
        int i = from;
        while (i < n) {
            int end = i;
            while (end < n && u[end] != '\n' && u[end] != '\r') {
                end++;
            }
            String line = new String(u, i, end - i, StandardCharsets.UTF_8);
            boolean lineComplete = end < n;
            if (line.isEmpty() && lineComplete) {
                Verdict v = eventData(data, hasData, true, reading);
                if (v != NOT_MCP) {
                    return v;
                }
                data.setLength(0);
                hasData = false;
            } else if (line.startsWith("data")) {
                String value = line.substring(4);
                if (value.startsWith(":")) {
                    value = value.substring(value.startsWith(": ") ? 2 : 1);
                } else if (!value.isEmpty()) {
                    value = null; // another field whose name starts with "data"
                }
                if (value != null) {
                    if (hasData) {
                        data.append('\n');
                    }
                    data.append(value);
                    hasData = true;
                }
            }
            i = end < n && u[end] == '\r' && end + 1 < n && u[end + 1] == '\n' ? end + 2 : end + 1;
        }
        // The last event: a receiver that reads the whole body may still take it (complete) or it may go on.
        return eventData(data, hasData, complete, reading);
    }

    private static Verdict eventData(StringBuilder data, boolean hasData, boolean complete, String reading) {
        if (!hasData) {
            return NOT_MCP;
        }
        byte[] d = data.toString().getBytes(StandardCharsets.UTF_8);
        int i = skipSpace(d, 0, d.length);
        if (i == d.length || (d[i] != '{' && d[i] != '[')) {
            return NOT_MCP;
        }
        return json(d, i, d.length, complete, reading + ", framed as server-sent events");
    }

    /** The member of {@code o} a case-folding decoder reads as {@code lower} (the last one that matches), or null. */
    private static Json member(Json.Obj o, String lower) {
        Json found = null;
        for (var e : o.members().entrySet()) {
            if (McpNames.matches(e.getKey(), lower)) {
                found = e.getValue();
            }
        }
        return found;
    }

    /** Whether any member of {@code o} a decoder could read as {@code method} names an MCP method: its value, or null. */
    private static String method(Json.Obj o) {
        for (var e : o.members().entrySet()) {
            if (McpNames.matches(e.getKey(), "method")
                    && e.getValue() instanceof Json.Str s
                    && McpGate.isMcpMethod(s.value())) {
                return s.value();
            }
        }
        return null;
    }

    /** The first MCP message of {@code value} (one message, or a batch with one), or null. */
    private static Json.Obj mcpMessage(Json value) {
        if (value instanceof Json.Obj o) {
            return McpGate.isMcpMethod(method(o)) ? o : null;
        }
        if (value instanceof Json.Arr a) {
            for (Json item : a.items()) {
                Json.Obj found = mcpMessage(item);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /**
     * Whether the string tokens of {@code u[from, n)}, read as JSON strings with their escapes decoded, contain a
     * member named {@code jsonrpc}, or a member {@code method} whose value is an MCP method: a lenient parser's
     * reading of text the strict one refuses (duplicate members, a truncated prefix, trailing data). {@code
     * topLevel}: only members of the top-level object, or of the objects of a top-level array (a batch), count.
     */
    static boolean namesMcp(byte[] u, int from, int n, boolean topLevel) {
        String previousKey = null;
        int depth = 0;
        boolean array = from < n && u[from] == '[';
        int i = from;
        while (i < n) {
            if (u[i] != '"') {
                if (u[i] == '{' || u[i] == '[') {
                    depth++;
                } else if (u[i] == '}' || u[i] == ']') {
                    depth--;
                }
                i++;
                continue;
            }
            boolean counts = !topLevel || depth == 1 || (array && depth == 2);
            StringBuilder s = new StringBuilder();
            i = readString(u, i + 1, n, s);
            int next = skipSpace(u, i, n);
            boolean key = next < n && u[next] == ':';
            String text = s.toString();
            if (counts && key && McpNames.matches(text, "jsonrpc")) {
                return true;
            }
            if (counts && !key && McpNames.matches(previousKey, "method") && McpGate.isMcpMethod(text)) {
                return true;
            }
            previousKey = key ? text : null;
            i = key ? next + 1 : i;
        }
        return false;
    }

    /** Reads a JSON string's content from {@code u[i..]} (after its opening quote) into {@code out}; returns the index after it. */
    private static int readString(byte[] u, int i, int n, StringBuilder out) {
        int start = i;
        while (i < n && u[i] != '"') {
            if (u[i] == '\\' && i + 1 < n) {
                out.append(new String(u, start, i - start, StandardCharsets.UTF_8));
                byte e = u[i + 1];
                if (e == 'u' && i + 5 < n) {
                    try {
                        out.append((char) Integer.parseInt(new String(u, i + 2, 4, StandardCharsets.US_ASCII), 16));
                    } catch (NumberFormatException bad) {
                        out.append('\uFFFD');
                    }
                    i += 6;
                } else {
                    out.append(
                            switch (e) {
                                case 'n' -> '\n';
                                case 't' -> '\t';
                                case 'r' -> '\r';
                                case 'b' -> '\b';
                                case 'f' -> '\f';
                                default -> (char) e;
                            });
                    i += 2;
                }
                start = i;
                if (out.length() > 256) {
                    // Long strings are no member name or method we look for; skip to the closing quote.
                    while (i < n && u[i] != '"') {
                        i += u[i] == '\\' ? 2 : 1;
                    }
                    out.setLength(0);
                    return Math.min(i + 1, n);
                }
            } else {
                i++;
            }
        }
        out.append(new String(u, start, Math.min(i, n) - start, StandardCharsets.UTF_8));
        return Math.min(i + 1, n);
    }

    private static int skipSpace(byte[] u, int i, int n) {
        while (i < n && (u[i] == ' ' || u[i] == '\t' || u[i] == '\n' || u[i] == '\r')) {
            i++;
        }
        return i;
    }
}
