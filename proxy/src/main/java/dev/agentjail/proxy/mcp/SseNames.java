package dev.agentjail.proxy.mcp;

import java.nio.charset.StandardCharsets;

/**
 * A streaming scan of a body framed as server-sent events, fed in any number of pieces: the data of each event (its
 * {@code data} lines joined by line feeds, as a receiver joins them) is scanned by a {@link JsonNames} of its own.
 * Lines end at CR, LF or CRLF; a blank line ends an event.
 */
final class SseNames {
    private static final byte[] DATA = "data".getBytes(StandardCharsets.US_ASCII);
    private static final String[] FIELDS = {"data:", "event:", "id:", "retry:", ":"};

    private enum Line {
        /** Reading the field name (up to its colon). */
        NAME,
        /** Right after {@code data:}: one space is skipped. */
        VALUE_START,
        /** In a {@code data} value. */
        VALUE,
        /** In a line of another field, or a comment. */
        SKIP
    }

    private Line line = Line.NAME;
    private int nameLength;
    private boolean nameIsData = true;
    private boolean lastWasCr;
    private boolean hasData;
    private JsonNames event = new JsonNames();
    private boolean found;

    boolean found() {
        return found;
    }

    boolean dead() {
        return false;
    }

    /** 1 when {@code u[0, n)} starts with an SSE field name, 0 when it may (too short to tell), -1 when not. */
    static int fieldStart(byte[] u, int n) {
        boolean maybe = false;
        for (String f : FIELDS) {
            int k = 0;
            while (k < f.length() && k < n && u[k] == f.charAt(k)) {
                k++;
            }
            if (k == f.length()) {
                return 1;
            }
            maybe |= k == n;
        }
        return maybe ? 0 : -1;
    }

    void feed(byte[] u, int off, int len) {
        int end = off + len;
        for (int i = off; i < end && !found; i++) {
            byte c = u[i];
            if (c == '\n' && lastWasCr) {
                lastWasCr = false;
                continue; // The LF of a CRLF.
            }
            lastWasCr = c == '\r';
            if (c == '\n' || c == '\r') {
                endLine();
                continue;
            }
            switch (line) {
                case NAME -> name(c);
                case VALUE_START -> {
                    line = Line.VALUE;
                    if (c != ' ') {
                        data(c);
                    }
                }
                case VALUE -> data(c);
                case SKIP -> {}
            }
        }
    }

    private void name(byte c) {
        if (c == ':') {
            if (nameIsData && nameLength == DATA.length) {
                startDataLine();
                line = Line.VALUE_START;
            } else {
                line = Line.SKIP;
            }
            return;
        }
        nameIsData &= nameLength < DATA.length && DATA[nameLength] == c;
        nameLength++;
    }

    private void startDataLine() {
        if (hasData) {
            data((byte) '\n');
        }
        hasData = true;
    }

    private void data(byte c) {
        event.feed(c);
        found |= event.found();
    }

    private void endLine() {
        if (line == Line.NAME) {
            if (nameLength == 0) {
                // A blank line: the event ends, the next one's data starts afresh.
                event = new JsonNames();
                hasData = false;
            } else if (nameIsData && nameLength == DATA.length) {
                startDataLine(); // "data" alone: a data line with an empty value.
            }
        }
        line = Line.NAME;
        nameLength = 0;
        nameIsData = true;
    }
}
