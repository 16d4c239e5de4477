package dev.agentjail.proxy.http;

/** Strict parsing of a chunk-size line: {@code 1*HEXDIG *( ";" token [ "=" ( token / quoted-string ) ] )}. */
final class ChunkSyntax {
    private static final int MAX_HEX_DIGITS = 15;

    private ChunkSyntax() {}

    static long parseSizeLine(String line) throws RequestRejected {
        int i = 0;
        long size = 0;
        while (i < line.length() && Character.digit(line.charAt(i), 16) >= 0 && line.charAt(i) < 128) {
            if (i >= MAX_HEX_DIGITS) {
                throw RequestRejected.bad("bad-chunk", "chunk size too large");
            }
            size = (size << 4) | Character.digit(line.charAt(i), 16);
            i++;
        }
        if (i == 0) {
            throw RequestRejected.bad("bad-chunk", "invalid chunk size");
        }
        while (i < line.length()) {
            if (line.charAt(i) != ';') {
                throw RequestRejected.bad("bad-chunk", "invalid chunk size");
            }
            i = extension(line, i + 1);
        }
        return size;
    }

    /** Parses one extension after its ';' and returns the index after it. */
    private static int extension(String line, int i) throws RequestRejected {
        int nameEnd = tokenEnd(line, i);
        if (nameEnd == i) {
            throw RequestRejected.bad("bad-chunk", "invalid chunk extension");
        }
        i = nameEnd;
        if (i < line.length() && line.charAt(i) == '=') {
            i++;
            if (i < line.length() && line.charAt(i) == '"') {
                i = quotedStringEnd(line, i);
            } else {
                int valueEnd = tokenEnd(line, i);
                if (valueEnd == i) {
                    throw RequestRejected.bad("bad-chunk", "invalid chunk extension");
                }
                i = valueEnd;
            }
        }
        return i;
    }

    private static int tokenEnd(String s, int i) {
        int j = i;
        while (j < s.length() && HeaderSyntax.isTchar(s.charAt(j))) {
            j++;
        }
        return j;
    }

    private static int quotedStringEnd(String s, int i) throws RequestRejected {
        for (int j = i + 1; j < s.length(); j++) {
            char c = s.charAt(j);
            if (c == '"') {
                return j + 1;
            }
            if (c == '\\') {
                j++;
            } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
                break;
            }
        }
        throw RequestRejected.bad("bad-chunk", "invalid quoted chunk extension");
    }
}
