package dev.agentjail.proxy.redact;

/**
 * How raw bytes are decoded for the scan, and which marker alphabet goes back into them. Every mode but {@link
 * #PLAIN} reads both backslash escapes and percent-encoding, whatever the declared type: a receiver may apply
 * either (a form whose value a JSON parser reads, a JSON body a server percent-decodes), so the scan does.
 */
enum Mode {
    JSON(true, true, false, false, true, false, false, false),
    TEXT(true, true, false, false, false, false, false, true),
    /** A multipart body: as {@link #TEXT}, and quoted-printable ({@code =XX}, soft line breaks) as MIME parsers read. */
    MULTIPART(true, true, false, false, false, false, true, true),
    FORM(true, true, true, false, false, true, false, true),
    TARGET(true, true, false, true, false, true),
    PLAIN(false, false, false, false, false, false);

    Mode(
            boolean backslash,
            boolean percent,
            boolean plus,
            boolean plusAfterQuery,
            boolean clipAtQuote,
            boolean urlSafeMarkers) {
        this(backslash, percent, plus, plusAfterQuery, clipAtQuote, urlSafeMarkers, false, false);
    }

    final boolean backslash;
    final boolean percent;
    final boolean plus;
    final boolean plusAfterQuery;
    /** Never write a marker over an unescaped double quote (keeps JSON strings closed). */
    final boolean clipAtQuote;

    final boolean urlSafeMarkers;
    /** {@code =XX} and the soft line break {@code =}CRLF (RFC 2045 quoted-printable). */
    final boolean quotedPrintable;
    /** Numeric character references, {@code &#103;} and {@code &#x67;} (XML and HTML parsers). */
    final boolean charRefs;
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
            boolean urlSafeMarkers,
            boolean quotedPrintable,
            boolean charRefs) {
        this.quotedPrintable = quotedPrintable;
        this.charRefs = charRefs;
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
        special['='] = quotedPrintable;
        special['&'] = charRefs;
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
            case MULTIPART -> MULTIPART;
            case TEXT -> TEXT;
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
        if (b == '=' && quotedPrintable) {
            return quotedPrintable(r, i, end, out);
        }
        if (b == '&' && charRefs) {
            return charRef(r, i, end, out);
        }
        if (b == '%' && percent) {
            if (i + 1 < end && (r[i + 1] | 0x20) == 'u') {
                // %uXXXX: System.Web's HttpUtility.UrlDecode (ASP.NET query and form) and JavaScript's unescape.
                int u = percentU(r, i, end);
                if (u != LITERAL) {
                    return u == INCOMPLETE ? INCOMPLETE : utf8(u, 6, out);
                }
                return LITERAL;
            }
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
            return utf8(cp, 6, out);
        }
        return LITERAL;
    }

    /** Digits read in a character reference at most (leading zeros included); a longer one is read as text. */
    static final int CHAR_REF_DIGITS = 12;

    /**
     * A numeric character reference at {@code r[i]}: {@code &#} and decimal digits, or {@code &#x} (either case) and hex
     * digits, then {@code ;}, which HTML parsers also read without the semicolon. Code points 1 to 0xFFFF; others, and
     * named references, are read as text.
     */
    private static int charRef(byte[] r, int i, int end, byte[] out) {
        if (i + 1 >= end) {
            return INCOMPLETE;
        }
        if (r[i + 1] != '#') {
            return LITERAL;
        }
        int p = i + 2;
        if (p >= end) {
            return INCOMPLETE;
        }
        boolean hexDigits = (r[p] | 0x20) == 'x';
        if (hexDigits) {
            p++;
        }
        int start = p;
        int cp = 0;
        while (p < end && p - start < CHAR_REF_DIGITS) {
            byte c = r[p];
            int d = hexDigits ? hex(c) : c >= '0' && c <= '9' ? c - '0' : -1;
            if (d < 0) {
                break;
            }
            cp = Math.min(cp * (hexDigits ? 16 : 10) + d, 0x110000);
            p++;
        }
        if (p >= end) {
            return INCOMPLETE;
        }
        if (p == start || cp == 0 || cp > 0xffff) {
            return LITERAL;
        }
        if (r[p] == ';') {
            p++;
        }
        return utf8(cp, p - i, out);
    }

    /**
     * Soft line breaks read in a row before one byte at most (bounds the raw bytes behind one decoded byte, and so the
     * hold-back); the first {@code =} of a longer chain is read as text.
     */
    static final int SOFT_BREAKS = 16;

    /**
     * A quoted-printable escape at {@code r[i]}: {@code =XX} (hex digits in either case, as lenient decoders accept),
     * or soft line breaks ({@code =} and LF or CRLF) read together with the byte after them, which may itself be an
     * {@code =XX}. A soft break produces no byte of its own, so it is consumed with the next one (the raw map has no
     * event for nothing).
     */
    private static int quotedPrintable(byte[] r, int i, int end, byte[] out) {
        int p = i;
        int breaks = 0;
        while (true) {
            if (p + 1 >= end) {
                return INCOMPLETE;
            }
            byte c = r[p + 1];
            int brk;
            if (c == '\n') {
                brk = 2;
            } else if (c == '\r') {
                if (p + 2 >= end) {
                    return INCOMPLETE;
                }
                brk = r[p + 2] == '\n' ? 3 : -1;
            } else {
                brk = -1;
            }
            if (brk < 0) {
                break;
            }
            if (++breaks > SOFT_BREAKS) {
                return LITERAL;
            }
            p += brk;
            if (p >= end) {
                return INCOMPLETE;
            }
            if (r[p] != '=') {
                out[0] = r[p];
                return (p + 1 - i) << 2 | 1;
            }
        }
        if (p + 3 > end) {
            return INCOMPLETE;
        }
        int hi = hex(r[p + 1]);
        int lo = hex(r[p + 2]);
        if ((hi | lo) < 0) {
            if (p == i) {
                return LITERAL;
            }
            out[0] = '=';
            return (p + 1 - i) << 2 | 1;
        }
        out[0] = (byte) (hi << 4 | lo);
        return (p + 3 - i) << 2 | 1;
    }

    /**
     * The code unit of the {@code %uXXXX} escape at {@code r[i]} (its {@code u} already seen), {@link #INCOMPLETE}
     * when the bytes end inside hex digits, or {@link #LITERAL}.
     */
    private static int percentU(byte[] r, int i, int end) {
        int cp = 0;
        for (int k = 2; k < 6; k++) {
            if (i + k >= end) {
                return INCOMPLETE;
            }
            int h = hex(r[i + k]);
            if (h < 0) {
                return LITERAL;
            }
            cp = cp << 4 | h;
        }
        // 0 is a valid code unit but collides with INCOMPLETE: shift it out of the way.
        return cp == 0 ? 0x10000 : cp;
    }

    /** Writes the UTF-8 of code unit {@code cp} (below 0x10000, surrogates as three bytes) to {@code out}. */
    private static int utf8(int cp, int consumed, byte[] out) {
        cp &= 0xffff;
        if (cp < 0x80) {
            out[0] = (byte) cp;
            return consumed * 4 + 1;
        }
        if (cp < 0x800) {
            out[0] = (byte) (0xc0 | cp >> 6);
            out[1] = (byte) (0x80 | cp & 0x3f);
            return consumed * 4 + 2;
        }
        out[0] = (byte) (0xe0 | cp >> 12);
        out[1] = (byte) (0x80 | cp >> 6 & 0x3f);
        out[2] = (byte) (0x80 | cp & 0x3f);
        return consumed * 4 + 3;
    }

    /**
     * Escapes are decoded again in what they produce up to this many times ({@code %2567}, {@code %5Cu0067}, {@code
     * \u0025 67}: double and triple encoding).
     */
    static final int LEVELS = 3;

    /**
     * {@link #escape} read through {@link #LEVELS} rounds of decoding: where one round produces {@code %} or a
     * backslash, the characters after it (each read through the rounds below) may form a further escape. At the end of
     * the input ({@code last}) a cut-off outer escape falls back to the inner reading.
     */
    int nested(byte[] r, int i, int end, byte[] out, boolean last) {
        // The common case without the rounds: a single escape (or none) that yields no '%' or backslash. Each round
        // returns the round below's reading unchanged then, so all of them would return this same result.
        int first = escape(r, i, end, out);
        if (first == INCOMPLETE || first > 0 && (first & 3) != 1) {
            return first;
        }
        byte c = first < 0 ? r[i] : out[0];
        if (!(c == '%' && percent) && !(c == '\\' && backslash)) {
            return first;
        }
        return level(r, i, end, out, LEVELS, last);
    }

    private int level(byte[] r, int i, int end, byte[] out, int levels, boolean last) {
        if (levels == 1) {
            return escape(r, i, end, out);
        }
        int first = level(r, i, end, out, levels - 1, last);
        byte c;
        int used;
        if (first == INCOMPLETE) {
            return INCOMPLETE;
        } else if (first < 0) {
            c = r[i];
            used = 1;
        } else if ((first & 3) == 1) {
            c = out[0];
            used = first >> 2;
        } else {
            return first;
        }
        if (!(c == '%' && percent) && !(c == '\\' && backslash)) {
            return first;
        }
        byte[] chars = new byte[6];
        int[] ends = new int[6];
        byte[] one = new byte[3];
        chars[0] = c;
        ends[0] = i + used;
        int k = 1;
        int p = i + used;
        boolean cut = false;
        while (k < chars.length) {
            if (p >= end) {
                cut = true;
                break;
            }
            int inner = level(r, p, end, one, levels - 1, last);
            if (inner == INCOMPLETE) {
                cut = true;
                break;
            }
            if (inner < 0) {
                chars[k] = r[p];
                p++;
            } else if ((inner & 3) == 1) {
                chars[k] = one[0];
                p += inner >> 2;
            } else {
                break;
            }
            ends[k++] = p;
        }
        int outer = escape(chars, 0, k, one);
        if (outer == INCOMPLETE) {
            return cut && !last ? INCOMPLETE : first;
        }
        if (outer < 0) {
            return first;
        }
        int produced = outer & 3;
        System.arraycopy(one, 0, out, 0, produced);
        return (ends[(outer >> 2) - 1] - i) << 2 | produced;
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
