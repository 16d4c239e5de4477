package dev.agentjail.proxy.json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * A strict RFC 8259 parser for the JSON the proxy decides on: UTF-8 only (no BOM, no overlong forms, no encoded
 * surrogates), no duplicate object member names at any depth, no escaped lone surrogates, nesting and string sizes
 * bounded, nothing but whitespace after the value. Strict so that the proxy and the MCP server can never read one
 * body two ways (a second {@code "name"} member, a NUL, a BOM).
 */
public final class JsonReader {
    /** Deepest nesting accepted; MCP messages need a handful of levels, input schemas a few more. */
    public static final int MAX_DEPTH = 64;

    /** Longest number literal accepted. */
    static final int MAX_NUMBER_CHARS = 64;

    private final byte[] in;
    private final int end;
    private int pos;
    private final int maxDepth;
    private int depth;

    private JsonReader(byte[] in, int offset, int length, int maxDepth) {
        this.in = in;
        this.pos = offset;
        this.end = offset + length;
        this.maxDepth = maxDepth;
    }

    private JsonReader(byte[] in, int offset, int length) {
        this(in, offset, length, MAX_DEPTH);
    }

    /** Parses exactly one JSON value filling {@code in[offset, offset + length)}. */
    public static Json parse(byte[] in, int offset, int length) throws JsonException {
        return parse(in, offset, length, MAX_DEPTH);
    }

    /** As {@link #parse(byte[], int, int)}, with nesting bounded at {@code maxDepth} (at most {@link #MAX_DEPTH}). */
    public static Json parse(byte[] in, int offset, int length, int maxDepth) throws JsonException {
        JsonReader r = new JsonReader(in, offset, length, Math.min(maxDepth, MAX_DEPTH));
        r.skipWhitespace();
        Json value = r.value();
        r.skipWhitespace();
        if (r.pos != r.end) {
            throw r.error("unexpected data after the JSON value");
        }
        return value;
    }

    public static Json parse(byte[] in) throws JsonException {
        return parse(in, 0, in.length);
    }

    /**
     * The top-level members of a JSON object that could be read completely from a body's first {@code length} bytes
     * (the rest of the body not seen yet); for an array, those of its first element. Null when the prefix is not the
     * start of an object or an array of objects, or is not valid JSON as far as it goes.
     */
    public static Json.Obj prefixMembers(byte[] in, int length) {
        JsonReader r = new JsonReader(in, 0, length);
        LinkedHashMap<String, Json> members = new LinkedHashMap<>();
        try {
            r.skipWhitespace();
            if (r.pos < r.end && r.in[r.pos] == '[') {
                r.pos++;
                r.skipWhitespace();
            }
            if (r.pos >= r.end || r.in[r.pos] != '{') {
                return null;
            }
            r.pos++;
            r.skipWhitespace();
            while (r.pos < r.end && r.in[r.pos] != '}') {
                String name = r.string();
                r.skipWhitespace();
                r.expect(':');
                r.skipWhitespace();
                Json value = r.value();
                if (members.put(name, value) != null) {
                    return null;
                }
                r.skipWhitespace();
                if (r.pos < r.end && r.in[r.pos] == ',') {
                    r.pos++;
                    r.skipWhitespace();
                } else if (r.pos < r.end && r.in[r.pos] != '}') {
                    return null;
                }
            }
        } catch (JsonException e) {
            if (!e.truncated()) {
                return null;
            }
        }
        return new Json.Obj(members);
    }

    private Json value() throws JsonException {
        if (pos >= end) {
            throw truncated();
        }
        byte b = in[pos];
        return switch (b) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> new Json.Str(string());
            case 't' -> literal("true", new Json.Bool(true));
            case 'f' -> literal("false", new Json.Bool(false));
            case 'n' -> literal("null", Json.Null.INSTANCE);
            default -> {
                if (b == '-' || (b >= '0' && b <= '9')) {
                    yield number();
                }
                throw error("unexpected character " + describe(b));
            }
        };
    }

    private Json object() throws JsonException {
        enter();
        pos++;
        LinkedHashMap<String, Json> members = new LinkedHashMap<>();
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            depth--;
            return new Json.Obj(members);
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                throw error("expected a member name");
            }
            String name = string();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            Json value = value();
            if (members.put(name, value) != null) {
                throw error("duplicate member name \"" + printable(name) + "\"");
            }
            skipWhitespace();
            byte b = peek();
            pos++;
            if (b == '}') {
                depth--;
                return new Json.Obj(members);
            }
            if (b != ',') {
                throw error("expected ',' or '}'");
            }
        }
    }

    private Json array() throws JsonException {
        enter();
        pos++;
        List<Json> items = new ArrayList<>();
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            depth--;
            return new Json.Arr(items);
        }
        while (true) {
            skipWhitespace();
            items.add(value());
            skipWhitespace();
            byte b = peek();
            pos++;
            if (b == ']') {
                depth--;
                return new Json.Arr(items);
            }
            if (b != ',') {
                throw error("expected ',' or ']'");
            }
        }
    }

    private void enter() throws JsonException {
        if (++depth > maxDepth) {
            throw error("nested deeper than " + maxDepth + " levels");
        }
    }

    private String string() throws JsonException {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= end) {
                throw truncated();
            }
            int b = in[pos] & 0xff;
            if (b == '"') {
                pos++;
                return sb.toString();
            }
            if (b == '\\') {
                escape(sb);
            } else if (b < 0x20) {
                throw error("unescaped control character in a string");
            } else if (b < 0x80) {
                sb.append((char) b);
                pos++;
            } else {
                sb.appendCodePoint(utf8(b));
            }
        }
    }

    private void escape(StringBuilder sb) throws JsonException {
        pos++;
        byte e = peek();
        pos++;
        switch (e) {
            case '"' -> sb.append('"');
            case '\\' -> sb.append('\\');
            case '/' -> sb.append('/');
            case 'b' -> sb.append('\b');
            case 'f' -> sb.append('\f');
            case 'n' -> sb.append('\n');
            case 'r' -> sb.append('\r');
            case 't' -> sb.append('\t');
            case 'u' -> {
                char c = hex4();
                if (Character.isHighSurrogate(c)) {
                    if (pos + 1 < end && in[pos] == '\\' && in[pos + 1] == 'u') {
                        pos += 2;
                        char low = hex4();
                        if (!Character.isLowSurrogate(low)) {
                            throw error("unpaired surrogate escape");
                        }
                        sb.append(c).append(low);
                    } else if (pos + 1 >= end) {
                        throw truncated();
                    } else {
                        throw error("unpaired surrogate escape");
                    }
                } else if (Character.isLowSurrogate(c)) {
                    throw error("unpaired surrogate escape");
                } else {
                    sb.append(c);
                }
            }
            default -> throw error("invalid escape");
        }
    }

    private char hex4() throws JsonException {
        if (pos + 4 > end) {
            throw truncated();
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int d = Character.digit(in[pos++], 16);
            if (d < 0) {
                throw error("invalid \\u escape");
            }
            v = v << 4 | d;
        }
        return (char) v;
    }

    /** Decodes one multi-byte UTF-8 sequence starting with {@code b0}, refusing every malformed form. */
    private int utf8(int b0) throws JsonException {
        int need;
        int cp;
        int min;
        if (b0 >= 0xc2 && b0 <= 0xdf) {
            need = 1;
            cp = b0 & 0x1f;
            min = 0x80;
        } else if (b0 >= 0xe0 && b0 <= 0xef) {
            need = 2;
            cp = b0 & 0x0f;
            min = 0x800;
        } else if (b0 >= 0xf0 && b0 <= 0xf4) {
            need = 3;
            cp = b0 & 0x07;
            min = 0x10000;
        } else {
            throw error("invalid UTF-8");
        }
        if (pos + need >= end) {
            throw truncated();
        }
        for (int i = 1; i <= need; i++) {
            int b = in[pos + i] & 0xff;
            if ((b & 0xc0) != 0x80) {
                throw error("invalid UTF-8");
            }
            cp = cp << 6 | (b & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            throw error("invalid UTF-8");
        }
        pos += need + 1;
        return cp;
    }

    private Json number() throws JsonException {
        int start = pos;
        if (peekOr() == '-') {
            pos++;
        }
        if (peekOr() == '0') {
            pos++;
        } else if (isDigit(peekOr())) {
            digits();
        } else {
            throw pos >= end ? truncated() : error("invalid number");
        }
        if (peekOr() == '.') {
            pos++;
            if (!isDigit(peekOr())) {
                throw pos >= end ? truncated() : error("invalid number");
            }
            digits();
        }
        if (peekOr() == 'e' || peekOr() == 'E') {
            pos++;
            if (peekOr() == '+' || peekOr() == '-') {
                pos++;
            }
            if (!isDigit(peekOr())) {
                throw pos >= end ? truncated() : error("invalid number");
            }
            digits();
        }
        if (pos >= end && depth > 0) {
            // A number at the end of a prefix may continue in bytes not seen yet.
            throw truncated();
        }
        if (pos - start > MAX_NUMBER_CHARS) {
            throw error("number longer than " + MAX_NUMBER_CHARS + " characters");
        }
        return new Json.Num(new String(in, start, pos - start, java.nio.charset.StandardCharsets.US_ASCII));
    }

    private void digits() {
        while (isDigit(peekOr())) {
            pos++;
        }
    }

    private static boolean isDigit(int b) {
        return b >= '0' && b <= '9';
    }

    private Json literal(String word, Json value) throws JsonException {
        for (int i = 0; i < word.length(); i++) {
            if (pos >= end) {
                throw truncated();
            }
            if (in[pos++] != word.charAt(i)) {
                throw error("invalid literal");
            }
        }
        return value;
    }

    private void skipWhitespace() {
        while (pos < end) {
            byte b = in[pos];
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return;
            }
            pos++;
        }
    }

    private void expect(char c) throws JsonException {
        if (pos >= end) {
            throw truncated();
        }
        if (in[pos] != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private byte peek() throws JsonException {
        if (pos >= end) {
            throw truncated();
        }
        return in[pos];
    }

    private int peekOr() {
        return pos < end ? in[pos] : -1;
    }

    private JsonException error(String message) {
        return new JsonException(message + " at byte " + pos, false);
    }

    private JsonException truncated() {
        return new JsonException("unexpected end of input", true);
    }

    private static String describe(byte b) {
        int v = b & 0xff;
        return v >= 0x21 && v < 0x7f ? "'" + (char) v + "'" : String.format("0x%02x", v);
    }

    private static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && sb.length() < 64; i++) {
            char c = s.charAt(i);
            sb.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return sb.toString();
    }
}
