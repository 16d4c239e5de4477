package dev.agentjail.proxy.audit;

/**
 * Checks that bytes are exactly one syntactically valid JSON object (RFC 8259), without building it, so the chain
 * verifier can tell a record from a fragment of one.
 */
final class JsonSyntax {

    /** Deeper nesting than any audit record has; bounds the recursion on hostile input. */
    private static final int MAX_DEPTH = 32;

    private final byte[] in;
    private final int end;
    private int pos;

    private JsonSyntax(byte[] in, int offset, int length) {
        this.in = in;
        this.pos = offset;
        this.end = offset + length;
    }

    /** Whether {@code length} bytes of {@code in} from {@code offset} are one JSON object and nothing else. */
    static boolean isObject(byte[] in, int offset, int length) {
        JsonSyntax p = new JsonSyntax(in, offset, length);
        try {
            p.skipWhitespace();
            if (p.peek() != '{' || !p.value(0)) {
                return false;
            }
            p.skipWhitespace();
            return p.pos == p.end;
        } catch (IndexOutOfBoundsException e) {
            return false;
        }
    }

    private boolean value(int depth) {
        if (depth > MAX_DEPTH) {
            return false;
        }
        int c = peek();
        return switch (c) {
            case '{' -> object(depth);
            case '[' -> array(depth);
            case '"' -> string();
            case 't' -> literal("true");
            case 'f' -> literal("false");
            case 'n' -> literal("null");
            default -> number();
        };
    }

    private boolean object(int depth) {
        pos++;
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            return true;
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"' || !string()) {
                return false;
            }
            skipWhitespace();
            if (next() != ':') {
                return false;
            }
            skipWhitespace();
            if (!value(depth + 1)) {
                return false;
            }
            skipWhitespace();
            int c = next();
            if (c == '}') {
                return true;
            }
            if (c != ',') {
                return false;
            }
        }
    }

    private boolean array(int depth) {
        pos++;
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            return true;
        }
        while (true) {
            skipWhitespace();
            if (!value(depth + 1)) {
                return false;
            }
            skipWhitespace();
            int c = next();
            if (c == ']') {
                return true;
            }
            if (c != ',') {
                return false;
            }
        }
    }

    private boolean string() {
        pos++;
        while (true) {
            int c = next();
            if (c == '"') {
                return true;
            }
            if (c < 0x20) {
                return false;
            }
            if (c == '\\') {
                int e = next();
                if (e == 'u') {
                    for (int i = 0; i < 4; i++) {
                        if (Character.digit(next(), 16) < 0) {
                            return false;
                        }
                    }
                } else if ("\"\\/bfnrt".indexOf(e) < 0) {
                    return false;
                }
            }
        }
    }

    private boolean literal(String word) {
        for (int i = 0; i < word.length(); i++) {
            if (next() != word.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private boolean number() {
        if (peek() == '-') {
            pos++;
        }
        int c = next();
        if (c == '0') {
            // No leading zeros.
        } else if (c >= '1' && c <= '9') {
            skipDigits();
        } else {
            return false;
        }
        if (pos < end && in[pos] == '.') {
            pos++;
            if (!digit(next())) {
                return false;
            }
            skipDigits();
        }
        if (pos < end && (in[pos] == 'e' || in[pos] == 'E')) {
            pos++;
            if (pos < end && (in[pos] == '+' || in[pos] == '-')) {
                pos++;
            }
            if (!digit(next())) {
                return false;
            }
            skipDigits();
        }
        return true;
    }

    private void skipDigits() {
        while (pos < end && digit(in[pos])) {
            pos++;
        }
    }

    private static boolean digit(int c) {
        return c >= '0' && c <= '9';
    }

    private void skipWhitespace() {
        while (pos < end && (in[pos] == ' ' || in[pos] == '\t' || in[pos] == '\r' || in[pos] == '\n')) {
            pos++;
        }
    }

    /** The next byte (unsigned) without consuming it; past the end throws, which the caller maps to "invalid". */
    private int peek() {
        if (pos >= end) {
            throw new IndexOutOfBoundsException();
        }
        return in[pos] & 0xff;
    }

    private int next() {
        int c = peek();
        pos++;
        return c;
    }
}
