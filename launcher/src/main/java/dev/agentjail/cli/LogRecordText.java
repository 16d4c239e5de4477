package dev.agentjail.cli;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.regex.Pattern;

/** Turns log values into text a person reads: safe to print on a terminal, sizes in binary units. */
final class LogRecordText {
    private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private static final Pattern PLAIN_WORD = Pattern.compile("[\\p{L}\\p{N}_@%+=:,./~^*-]+");

    private LogRecordText() {}

    /**
     * {@code value} with every character that could act on a terminal or disguise text shown as a visible escape: C0
     * and C1 controls, DEL, the line and paragraph separators, the bidirectional controls (Trojan Source), characters
     * that show as nothing or as a space (see {@link #isInvisible}) and lone surrogates become {@code \\uXXXX}, and a backslash becomes {@code \\\\} so an escape cannot be forged. Hosts and
     * paths in the log come from the agent: they are printed only through this.
     */
    static String printable(String value) {
        if (value == null) {
            return null;
        }
        StringBuilder out = null;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            boolean pair = Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1));
            if (pair) {
                int cp = Character.toCodePoint(c, value.charAt(i + 1));
                boolean hidden = isInvisible(cp);
                if (hidden && out == null) {
                    out = new StringBuilder(value.length() + 16).append(value, 0, i);
                }
                if (out != null) {
                    if (hidden) {
                        out.append(String.format(Locale.ROOT, "\\u%04x\\u%04x", (int) c, (int) value.charAt(i + 1)));
                    } else {
                        out.append(c).append(value.charAt(i + 1));
                    }
                }
                i++;
                continue;
            }
            boolean unsafe = c == '\\' || isControl(c) || isBidi(c) || Character.isSurrogate(c) || isInvisible(c);
            if (unsafe && out == null) {
                out = new StringBuilder(value.length() + 16).append(value, 0, i);
            }
            if (out == null) {
                continue;
            }
            if (c == '\\') {
                out.append("\\\\");
            } else if (unsafe) {
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out == null ? value : out.toString();
    }

    /**
     * One word of a command line or a path, {@linkplain #printable printable}, and in single quotes (a quote inside as
     * {@code '\''}, as a shell writes it) when it is empty or holds anything but letters, digits and {@code
     * _@%+=:,./~^*-}: an argument {@code "a b"} shows as {@code 'a b'}, not as two arguments.
     */
    static String word(String value) {
        String p = printable(value);
        if (!p.isEmpty() && PLAIN_WORD.matcher(p).matches()) {
            return p;
        }
        return "'" + p.replace("'", "'\\''") + "'";
    }

    /** A time as the log writes it: RFC 3339 in UTC with exactly three fraction digits. */
    static String time(Instant t) {
        return TIME.format(t);
    }

    /** A byte count for people: {@code 512 B}, {@code 1.5 KiB}, {@code 3.0 MiB}. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        double v = n;
        int unit = -1;
        while (v >= 1024 && unit < UNITS.length - 1) {
            v /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, UNITS[unit]);
    }

    private static boolean isControl(char c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029';
    }

    /**
     * A character that shows as nothing or as a space: format characters (zero-width space and joiners, the BOM, soft
     * hyphen, tags), spaces other than the ASCII one, the Hangul fillers (letters to Unicode, blanks on screen), the
     * combining grapheme joiner and the variation selectors. Unescaped, one argument could pass for two, or a path for
     * another.
     */
    private static boolean isInvisible(int cp) {
        int type = Character.getType(cp);
        return type == Character.FORMAT
                || (type == Character.SPACE_SEPARATOR && cp != ' ')
                || cp == 0x115F
                || cp == 0x1160
                || cp == 0x3164
                || cp == 0xFFA0
                || cp == 0x034F
                || (cp >= 0x180B && cp <= 0x180F)
                || (cp >= 0xFE00 && cp <= 0xFE0F)
                || (cp >= 0xE0100 && cp <= 0xE01EF);
    }

    private static boolean isBidi(char c) {
        return c == '\u061c'
                || c == '\u200e'
                || c == '\u200f'
                || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069');
    }
}
