package dev.agentjail.proxy.mcp;

import java.nio.charset.StandardCharsets;

/**
 * A streaming scan of a JSON text, fed in any number of pieces, for what a lenient JSON-RPC receiver would take as MCP:
 * a member named {@code jsonrpc}, or a member {@code method} whose value is an MCP method, in the top-level object or
 * in an object of a top-level array (a batch); string escapes are decoded. The same reading as {@link
 * McpDetection#namesMcp} with {@code topLevel}, without holding the text.
 */
final class JsonNames {
    /** Strings longer than this are no member name or method looked for: only their end is looked for. */
    private static final int MAX_STRING = 256;

    private int depth;
    private Boolean array;
    private boolean dead;
    private boolean found;

    private boolean inString;
    private boolean escaped;
    private final byte[] string = new byte[MAX_STRING * 6];
    private int stringLength;
    private boolean tooLong;
    private boolean stringCounts;

    /** A string ended and the scan looks past white space for a colon: the string was a member name. */
    private String afterString;

    private boolean afterStringCounts;
    private String previousKey;

    boolean found() {
        return found;
    }

    boolean dead() {
        return dead;
    }

    /** The text cannot be JSON (its first character is not a bracket): nothing is looked for. */
    void kill() {
        dead = true;
    }

    void feed(byte[] u, int off, int len) {
        int end = off + len;
        for (int i = off; i < end && !found && !dead; i++) {
            feed(u[i]);
        }
    }

    /** The next byte of the text. */
    void feed(byte c) {
        if (found || dead) {
            return;
        }
        if (inString) {
            string(c);
            return;
        }
        boolean space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        if (afterString != null) {
            if (space) {
                return;
            }
            endString(c == ':');
            if (c == ':') {
                return;
            }
        }
        if (array == null) {
            if (space) {
                return;
            }
            if (c != '{' && c != '[') {
                dead = true;
                return;
            }
            array = c == '[';
        }
        switch (c) {
            case '{', '[' -> depth++;
            case '}', ']' -> depth--;
            case '"' -> {
                inString = true;
                stringLength = 0;
                tooLong = false;
                stringCounts = depth == 1 || (array && depth == 2);
            }
            default -> {}
        }
    }

    private void string(byte c) {
        if (escaped) {
            escaped = false;
            keep(c);
            return;
        }
        if (c == '\\') {
            escaped = true;
            keep(c);
            return;
        }
        if (c == '"') {
            inString = false;
            afterString = tooLong ? "" : decode(string, stringLength);
            afterStringCounts = stringCounts;
            return;
        }
        keep(c);
    }

    private void keep(byte c) {
        if (stringLength < string.length) {
            string[stringLength++] = c;
        } else {
            tooLong = true;
        }
    }

    /** The string before was a member name ({@code key}) or a value. */
    private void endString(boolean key) {
        String text = afterString;
        afterString = null;
        if (afterStringCounts && key && McpNames.matches(text, "jsonrpc")) {
            found = true;
        }
        if (afterStringCounts && !key && McpNames.matches(previousKey, "method") && McpGate.isMcpMethod(text)) {
            found = true;
        }
        previousKey = key ? text : null;
    }

    /** A JSON string's raw content with its escapes decoded; a malformed {@code \\u} escape is U+FFFD. */
    static String decode(byte[] raw, int n) {
        StringBuilder out = new StringBuilder(n);
        int start = 0;
        int i = 0;
        while (i < n) {
            if (raw[i] != '\\' || i + 1 >= n) {
                i++;
                continue;
            }
            out.append(new String(raw, start, i - start, StandardCharsets.UTF_8));
            byte e = raw[i + 1];
            if (e == 'u') {
                char decoded = '\uFFFD';
                if (i + 6 <= n) {
                    try {
                        decoded = (char) Integer.parseInt(new String(raw, i + 2, 4, StandardCharsets.US_ASCII), 16);
                    } catch (NumberFormatException bad) {
                        decoded = '\uFFFD';
                    }
                }
                out.append(decoded);
                i = Math.min(n, i + 6);
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
        }
        out.append(new String(raw, start, Math.max(0, n - start), StandardCharsets.UTF_8));
        return out.toString();
    }
}
