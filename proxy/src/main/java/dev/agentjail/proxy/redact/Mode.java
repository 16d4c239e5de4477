package dev.agentjail.proxy.redact;

/** How raw bytes are decoded for the scan, and which marker alphabet goes back into them. */
enum Mode {
    JSON(true, true, false, false, true, false),
    TEXT(true, true, false, false, false, false),
    FORM(false, true, true, false, false, true),
    TARGET(false, true, false, true, false, true),
    PLAIN(false, false, false, false, false, false);

    final boolean backslash;
    final boolean percent;
    final boolean plus;
    final boolean plusAfterQuery;
    /** Never write a marker over an unescaped double quote (keeps JSON strings closed). */
    final boolean clipAtQuote;

    final boolean urlSafeMarkers;
    /** Bytes that leave the fast copy loop. */
    final boolean[] special = new boolean[256];
    /** Each special byte repeated in all eight bytes of a long, for the word-at-a-time search. */
    final long[] specialMasks;

    Mode(
            boolean backslash,
            boolean percent,
            boolean plus,
            boolean plusAfterQuery,
            boolean clipAtQuote,
            boolean urlSafeMarkers) {
        this.backslash = backslash;
        this.percent = percent;
        this.plus = plus;
        this.plusAfterQuery = plusAfterQuery;
        this.clipAtQuote = clipAtQuote;
        this.urlSafeMarkers = urlSafeMarkers;
        special['\\'] = backslash;
        special['%'] = percent;
        special['+'] = plus || plusAfterQuery;
        special['?'] = plusAfterQuery;
        int count = 0;
        long[] masks = new long[4];
        for (int b = 0; b < 256; b++) {
            if (special[b]) {
                masks[count++] = 0x0101010101010101L * b;
            }
        }
        specialMasks = java.util.Arrays.copyOf(masks, count);
    }

    static Mode of(BodyKind kind) {
        return switch (kind) {
            case JSON -> JSON;
            case FORM -> FORM;
            case MULTIPART, TEXT -> TEXT;
        };
    }

    /** Result of {@link #escape} when the escape is cut off by the end of the available bytes. */
    static final int INCOMPLETE = 0;
    /** Result of {@link #escape} when the byte is not the start of an escape. */
    static final int LITERAL = -1;

    /**
     * Decodes the escape (backslash or percent) starting at {@code r[i]}.
     *
     * @return {@link #INCOMPLETE}, {@link #LITERAL}, or {@code consumed * 4 + produced} with the produced
     *     bytes (1 to 3) in {@code out}
     */
    int escape(byte[] r, int i, int end, byte[] out) {
        byte b = r[i];
        if (b == '%' && percent) {
            if (i + 3 > end) {
                return INCOMPLETE;
            }
            int hi = hex(r[i + 1]);
            int lo = hex(r[i + 2]);
            if ((hi | lo) < 0) {
                return LITERAL;
            }
            out[0] = (byte) (hi << 4 | lo);
            return 3 * 4 + 1;
        }
        if (b != '\\' || !backslash) {
            return LITERAL;
        }
        if (i + 2 > end) {
            return INCOMPLETE;
        }
        byte c = r[i + 1];
        int simple = switch (c) {
            case 'n' -> '\n';
            case 't' -> '\t';
            case 'r' -> '\r';
            case 'b' -> '\b';
            case 'f' -> '\f';
            case '/', '\\', '"', '\'' -> c;
            default -> -1;
        };
        if (simple >= 0) {
            out[0] = (byte) simple;
            return 2 * 4 + 1;
        }
        if (c == 'x') {
            if (i + 4 > end) {
                return INCOMPLETE;
            }
            int hi = hex(r[i + 2]);
            int lo = hex(r[i + 3]);
            if ((hi | lo) < 0) {
                return LITERAL;
            }
            out[0] = (byte) (hi << 4 | lo);
            return 4 * 4 + 1;
        }
        if (c == 'u') {
            if (i + 6 > end) {
                return INCOMPLETE;
            }
            int cp = 0;
            for (int k = 2; k < 6; k++) {
                int h = hex(r[i + k]);
                if (h < 0) {
                    return LITERAL;
                }
                cp = cp << 4 | h;
            }
            if (cp < 0x80) {
                out[0] = (byte) cp;
                return 6 * 4 + 1;
            }
            if (cp < 0x800) {
                out[0] = (byte) (0xc0 | cp >> 6);
                out[1] = (byte) (0x80 | cp & 0x3f);
                return 6 * 4 + 2;
            }
            out[0] = (byte) (0xe0 | cp >> 12);
            out[1] = (byte) (0x80 | cp >> 6 & 0x3f);
            out[2] = (byte) (0x80 | cp & 0x3f);
            return 6 * 4 + 3;
        }
        return LITERAL;
    }

    /** The decoded form of a whole value, as the scan would see it (used to register known values). */
    byte[] decodeAll(byte[] value) {
        byte[] result = new byte[value.length];
        byte[] out = new byte[3];
        int n = 0;
        boolean query = false;
        for (int i = 0; i < value.length; ) {
            byte b = value[i];
            int r = escape(value, i, value.length, out);
            if (r > 0) {
                for (int k = 0; k < (r & 3); k++) {
                    result[n++] = out[k];
                }
                i += r >> 2;
                continue;
            }
            if (b == '?') {
                query = true;
            }
            result[n++] = b == '+' && (plus || plusAfterQuery && query) ? (byte) ' ' : b;
            i++;
        }
        return java.util.Arrays.copyOf(result, n);
    }

    private static int hex(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        return -1;
    }
}
