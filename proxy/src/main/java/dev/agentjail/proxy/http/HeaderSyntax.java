package dev.agentjail.proxy.http;

/** RFC 9110/9112 syntax checks for tokens and header fields, strict where the RFC allows leniency. */
final class HeaderSyntax {
    private static final boolean[] TCHAR = new boolean[128];

    static {
        for (char c = '0'; c <= '9'; c++) {
            TCHAR[c] = true;
        }
        for (char c = 'a'; c <= 'z'; c++) {
            TCHAR[c] = true;
            TCHAR[c - 32] = true;
        }
        for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
            TCHAR[c] = true;
        }
    }

    private HeaderSyntax() {}

    static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (!isTchar(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    static boolean isTchar(char c) {
        return c < 128 && TCHAR[c];
    }

    /**
     * Splits {@code name: value} into name and trimmed value. Refuses obs-fold (a line starting with
     * whitespace), whitespace before the colon, non-token names and control characters in values.
     */
    static String[] parseField(String line) throws RequestRejected {
        char first = line.charAt(0);
        if (first == ' ' || first == '\t') {
            throw RequestRejected.bad("obs-fold", "folded header line (obs-fold)");
        }
        int colon = line.indexOf(':');
        if (colon < 0) {
            throw RequestRejected.bad("malformed-header", "header line without colon");
        }
        String name = line.substring(0, colon);
        if (!isToken(name)) {
            throw RequestRejected.bad("malformed-header", "invalid header name");
        }
        int start = colon + 1;
        int end = line.length();
        while (start < end && isOws(line.charAt(start))) {
            start++;
        }
        while (end > start && isOws(line.charAt(end - 1))) {
            end--;
        }
        for (int i = start; i < end; i++) {
            char c = line.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                throw RequestRejected.bad("malformed-header", "control character in header value");
            }
        }
        return new String[] {name, line.substring(start, end)};
    }

    static boolean isOws(char c) {
        return c == ' ' || c == '\t';
    }
}
