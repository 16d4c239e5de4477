package dev.agentjail.policy;

/** Makes user input safe to put in an error message: at most 64 characters, controls escaped. */
final class Quoting {
    static final int MAX_ECHO = 64;

    private Quoting() {}

    /** The text in single quotes, shortened and escaped. */
    static String quote(String text) {
        return "'" + shorten(text) + "'";
    }

    /** Whether the text holds a C0 control character or DEL, which no policy entry needs. */
    static boolean hasControl(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (isControl(text.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    static String shorten(String text) {
        return shorten(text, MAX_ECHO);
    }

    /** For library messages that quote a little input inside a longer sentence of their own. */
    static String shorten(String text, int max) {
        StringBuilder out = new StringBuilder();
        int limit = Math.min(text.length(), max);
        for (int i = 0; i < limit; i++) {
            char c = text.charAt(i);
            if (isControl(c)) {
                out.append(String.format("\\x%02x", (int) c));
            } else {
                out.append(c);
            }
        }
        if (text.length() > max) {
            out.append("...");
        }
        return out.toString();
    }

    private static boolean isControl(char c) {
        return c < 0x20 || c == 0x7F;
    }
}
