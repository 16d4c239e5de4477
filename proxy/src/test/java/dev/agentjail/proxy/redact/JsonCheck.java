package dev.agentjail.proxy.redact;

/** A strict, test-only JSON syntax check (RFC 8259): throws on the first error. */
final class JsonCheck {
    private final String text;
    private int pos;

    private JsonCheck(String text) {
        this.text = text;
    }

    static void validate(String text) {
        JsonCheck check = new JsonCheck(text);
        check.value();
        check.whitespace();
        if (check.pos != text.length()) {
            throw check.error("trailing characters");
        }
    }

    private void value() {
        whitespace();
        if (pos >= text.length()) {
            throw error("value expected");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true");
            case 'f' -> literal("false");
            case 'n' -> literal("null");
            default -> number();
        }
    }

    private void object() {
        pos++;
        whitespace();
        if (peek() == '}') {
            pos++;
            return;
        }
        while (true) {
            whitespace();
            string();
            whitespace();
            expect(':');
            value();
            whitespace();
            if (peek() == ',') {
                pos++;
            } else {
                expect('}');
                return;
            }
        }
    }

    private void array() {
        pos++;
        whitespace();
        if (peek() == ']') {
            pos++;
            return;
        }
        while (true) {
            value();
            whitespace();
            if (peek() == ',') {
                pos++;
            } else {
                expect(']');
                return;
            }
        }
    }

    private void string() {
        expect('"');
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return;
            }
            if (c < 0x20) {
                throw error("control character in string");
            }
            if (c == '\\') {
                char e = pos < text.length() ? text.charAt(pos++) : 0;
                if (e == 'u') {
                    for (int i = 0; i < 4; i++) {
                        if (pos >= text.length() || Character.digit(text.charAt(pos++), 16) < 0) {
                            throw error("bad unicode escape");
                        }
                    }
                } else if ("\"\\/bfnrt".indexOf(e) < 0 || e == 0) {
                    throw error("bad escape");
                }
            }
        }
    }

    private void number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        while (pos < text.length() && "0123456789.eE+-".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        if (pos == start) {
            throw error("unexpected character");
        }
    }

    private void literal(String word) {
        if (!text.startsWith(word, pos)) {
            throw error("bad literal");
        }
        pos += word.length();
    }

    private void whitespace() {
        while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : 0;
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private IllegalArgumentException error(String message) {
        return new IllegalArgumentException(message + " at " + pos);
    }

    /** JSON string body for {@code s}, escaping only what JSON requires (and {@code /} when asked). */
    static String escape(String s, boolean escapeSlash) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '/' -> out.append(escapeSlash ? "\\/" : "/");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
