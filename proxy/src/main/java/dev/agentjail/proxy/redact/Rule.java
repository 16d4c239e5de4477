package dev.agentjail.proxy.redact;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * One detector: a literal trigger found by the automaton, then a check of the decoded bytes around it.
 * {@link #verify} sees decoded bytes only and never keeps them.
 */
abstract class Rule {
    /** {@link #verify} result: no secret at this trigger. */
    static final long NO = -1;
    /** {@link #verify} result: more bytes are needed before deciding. */
    static final long MORE = -2;

    final String kind;
    final byte[] trigger;
    /** How many bytes before the trigger a match may start. */
    final int back;
    /** Decoded bytes from the trigger start that are always enough to decide. */
    final int maxSpan;
    /** The byte before the match must not be a word character. */
    final boolean boundaryBefore;

    Rule(String kind, String trigger, int back, int maxSpan, boolean boundaryBefore) {
        this(kind, trigger.getBytes(StandardCharsets.UTF_8), back, maxSpan, boundaryBefore);
    }

    Rule(String kind, byte[] trigger, int back, int maxSpan, boolean boundaryBefore) {
        this.kind = kind;
        this.trigger = trigger;
        this.back = back;
        this.maxSpan = maxSpan;
        this.boundaryBefore = boundaryBefore;
    }

    /**
     * Checks the decoded bytes at trigger start {@code t}.
     *
     * @param d decoded bytes; indices from {@code t - back - 1} up to {@code limit} are readable (earlier
     *     ones only if {@code >= 0})
     * @param complete no more bytes will arrive for this trigger: decide with what is there
     * @return {@link #NO}, {@link #MORE}, or {@code (start << 32) | end} of the secret in decoded bytes
     */
    abstract long verify(byte[] d, int t, int limit, boolean complete);

    static long span(int start, int end) {
        return ((long) start << 32) | (end & 0xffffffffL);
    }

    static int spanStart(long span) {
        return (int) (span >>> 32);
    }

    static int spanEnd(long span) {
        return (int) span;
    }

    // ---- character classes -------------------------------------------------------------------------

    static final boolean[] WORD = set("A-Za-z0-9_");

    /**
     * What may not stand before a trigger that needs a word boundary: letters and digits. An underscore may: it joins
     * names ({@code key_sk-ant-...}, {@code backup_ghp_...} in a file name or an argument), and a token glued to one is
     * still the token.
     */
    static final boolean[] WORD_BEFORE = set("A-Za-z0-9");

    static final boolean[] ALNUM = set("A-Za-z0-9");

    /** A class from a compact spec: ranges like {@code a-z} and single characters; a leading dash is literal. */
    static boolean[] set(String spec) {
        boolean[] result = new boolean[256];
        for (int i = 0; i < spec.length(); i++) {
            char c = spec.charAt(i);
            if (i + 2 < spec.length() && spec.charAt(i + 1) == '-') {
                for (char x = c; x <= spec.charAt(i + 2); x++) {
                    result[x] = true;
                }
                i += 2;
            } else {
                result[c] = true;
            }
        }
        return result;
    }

    static boolean in(boolean[] set, byte b) {
        return set[b & 0xff];
    }

    // ---- rule shapes --------------------------------------------------------------------------------

    /** Trigger, then {@code min..max} characters of one class, not followed by another word character. */
    static final class Token extends Rule {
        private final boolean[] body;
        private final int min;
        private final int max;
        private final byte[] mustContain;
        private final boolean valueOnly;

        Token(String kind, String trigger, String bodyClass, int min, int max) {
            this(kind, trigger, bodyClass, min, max, null, false);
        }

        /**
         * @param mustContain a literal the body must contain, or {@code null}
         * @param valueOnly redact only the body after the trigger (the trigger is a public locator)
         */
        Token(String kind, String trigger, String bodyClass, int min, int max, String mustContain, boolean valueOnly) {
            super(kind, trigger, 0, trigger.length() + max + 1, true);
            this.body = set(bodyClass);
            this.min = min;
            this.max = max;
            this.mustContain = mustContain == null ? null : mustContain.getBytes(StandardCharsets.US_ASCII);
            this.valueOnly = valueOnly;
        }

        @Override
        long verify(byte[] d, int t, int limit, boolean complete) {
            int start = t + trigger.length;
            int p = start;
            int end = Math.min(limit, start + max + 1);
            while (p < end && body[d[p] & 0xff]) {
                p++;
            }
            if (p == limit && !complete) {
                return MORE;
            }
            int n = p - start;
            if (n < min || n > max || (p < limit && ALNUM[d[p] & 0xff])) {
                return NO;
            }
            if (mustContain != null && indexOf(d, start, p, mustContain) < 0) {
                return NO;
            }
            return span(valueOnly ? start : t, p);
        }
    }

    /**
     * A secret that has no shape of its own but follows a telling key name ({@code aws_secret_access_key =
     * "…"}): only the value is redacted.
     */
    static final class KeyedValue extends Rule {
        private static final int MAX_GAP = 12;
        private final boolean[] body;
        private final int min;
        private final int max;

        KeyedValue(String kind, String keyName, String bodyClass, int min, int max) {
            super(kind, keyName, 0, keyName.length() + MAX_GAP + max + 1, false);
            this.body = set(bodyClass);
            this.min = min;
            this.max = max;
        }

        @Override
        long verify(byte[] d, int t, int limit, boolean complete) {
            int p = t + trigger.length;
            int gapEnd = p + MAX_GAP;
            boolean separator = false;
            while (true) {
                if (p >= limit) {
                    return complete ? NO : MORE;
                }
                byte b = d[p];
                if (b == '"' || b == '\'' || b == ' ' || b == '\t') {
                    p++;
                } else if (!separator && (b == '=' || b == ':')) {
                    separator = true;
                    p++;
                } else {
                    break;
                }
                if (p > gapEnd) {
                    return NO;
                }
            }
            if (!separator) {
                return NO;
            }
            int start = p;
            int end = Math.min(limit, start + max + 1);
            while (p < end && body[d[p] & 0xff]) {
                p++;
            }
            if (p == limit && !complete) {
                return MORE;
            }
            int n = p - start;
            if (n < min || n > max || (p < limit && ALNUM[d[p] & 0xff])) {
                return NO;
            }
            return span(start, p);
        }
    }

    /** A PEM private key block, from {@code -----BEGIN} to the matching {@code -----END …-----}. */
    static final class PemPrivateKey extends Rule {
        static final int MAX_BLOCK = 16 * 1024;
        private static final byte[] END = "-----END ".getBytes(StandardCharsets.US_ASCII);
        private static final byte[] DASHES = "-----".getBytes(StandardCharsets.US_ASCII);
        private static final byte[] PRIVATE_KEY = "PRIVATE KEY".getBytes(StandardCharsets.US_ASCII);
        private static final boolean[] LABEL = set("A-Z0-9 ");
        private static final boolean[] MATERIAL = set("A-Za-z0-9+/= \t\r\n:,._()\\");

        PemPrivateKey() {
            super("private-key", "-----BEGIN ", 0, MAX_BLOCK, false);
        }

        @Override
        long verify(byte[] d, int t, int limit, boolean complete) {
            int p = t + trigger.length;
            int labelStart = p;
            while (p < limit && p - labelStart <= 64 && LABEL[d[p] & 0xff]) {
                p++;
            }
            if (p + DASHES.length > limit) {
                return complete ? NO : MORE;
            }
            if (!startsWith(d, p, DASHES) || indexOf(d, labelStart, p, PRIVATE_KEY) < 0) {
                return NO;
            }
            p += DASHES.length;
            int cap = Math.min(limit, t + MAX_BLOCK);
            while (p < cap) {
                byte b = d[p];
                if (b == '-') {
                    if (p + END.length > cap) {
                        if (cap == limit && !complete) {
                            return MORE;
                        }
                        return span(t, cap);
                    }
                    if (startsWith(d, p, END)) {
                        int close = indexOf(d, p + END.length, Math.min(cap, p + END.length + 80), DASHES);
                        if (close >= 0) {
                            return span(t, close + DASHES.length);
                        }
                        if (cap == limit && !complete) {
                            return MORE;
                        }
                        return span(t, p + END.length);
                    }
                    if (!ALNUM[d[p - 1] & 0xff]) {
                        return span(t, p);
                    }
                } else if (!MATERIAL[b & 0xff]) {
                    return span(t, p);
                }
                p++;
            }
            if (p >= limit && !complete) {
                return MORE;
            }
            return span(t, p);
        }
    }

    /** A JWT: {@code ey…}.{@code ey…}.{@code signature} in base64url, the signature possibly empty. */
    static final class Jwt extends Rule {
        private static final boolean[] B64URL = set("A-Za-z0-9_=-");
        private static final int MAX_SEGMENT = 8 * 1024;

        Jwt() {
            super("jwt", "ey", 0, 3 * MAX_SEGMENT + 4, true);
        }

        @Override
        long verify(byte[] d, int t, int limit, boolean complete) {
            int p = t;
            for (int segment = 0; segment < 3; segment++) {
                int start = p;
                int end = Math.min(limit, start + MAX_SEGMENT);
                while (p < end && B64URL[d[p] & 0xff]) {
                    p++;
                }
                if (p == limit) {
                    return complete ? (segment == 2 ? span(t, p) : NO) : MORE;
                }
                if (p - start > MAX_SEGMENT - 1) {
                    return NO;
                }
                if (segment == 2) {
                    return span(t, p);
                }
                if (p - start < 8 || d[p] != '.') {
                    return NO;
                }
                p++;
                if (segment == 0) {
                    if (p + 2 > limit) {
                        return complete ? NO : MORE;
                    }
                    if (d[p] != 'e' || d[p + 1] != 'y') {
                        return NO;
                    }
                }
            }
            return NO;
        }
    }

    /**
     * Azure AD client secret: three characters, a digit, {@code Q~}, then 31 to 34 characters; the trigger is
     * the {@code Q~} in the middle.
     */
    static final class AzureClientSecret extends Rule {
        private static final boolean[] HEAD = set("A-Za-z0-9_~.");
        private static final boolean[] TAIL = set("A-Za-z0-9_~.-");

        AzureClientSecret() {
            super("azure-ad-client-secret", "Q~", 4, 2 + 34 + 1, false);
        }

        @Override
        long verify(byte[] d, int t, int limit, boolean complete) {
            int start = t - 4;
            if (start < 0 || d[t - 1] < '0' || d[t - 1] > '9') {
                return NO;
            }
            for (int i = start; i < t - 1; i++) {
                if (!HEAD[d[i] & 0xff]) {
                    return NO;
                }
            }
            if (start > 0 && TAIL[d[start - 1] & 0xff]) {
                return NO;
            }
            int p = t + 2;
            int end = Math.min(limit, p + 35);
            while (p < end && TAIL[d[p] & 0xff]) {
                p++;
            }
            if (p == limit && !complete) {
                return MORE;
            }
            int n = p - t - 2;
            if (n < 31 || n > 34) {
                return NO;
            }
            return span(start, p);
        }
    }

    /** An exact value the policy names (a host secret), found wherever its decoded bytes appear. */
    static final class Known extends Rule {
        static final int TRIGGER_BYTES = 32;
        private final byte[] value;

        Known(String kind, byte[] value) {
            super(kind, java.util.Arrays.copyOf(value, Math.min(value.length, TRIGGER_BYTES)), 0, value.length, false);
            this.value = value.clone();
        }

        @Override
        long verify(byte[] d, int t, int limit, boolean complete) {
            if (t + value.length > limit) {
                return complete ? NO : MORE;
            }
            return startsWith(d, t, value) ? span(t, t + value.length) : NO;
        }
    }

    /**
     * A regex applied where its literal prefix starts, over at most 1 KiB. With a named group {@code secret}
     * only that group is redacted; otherwise the whole match.
     */
    static final class Custom extends Rule {
        static final int WINDOW = 1024;
        static final String SECRET_GROUP = "secret";
        private final Pattern pattern;
        private final boolean secretGroup;

        Custom(String kind, Pattern pattern, String literalPrefix) {
            super(kind, literalPrefix, 0, WINDOW, false);
            this.pattern = pattern;
            this.secretGroup = pattern.namedGroups().containsKey(SECRET_GROUP);
        }

        @Override
        long verify(byte[] d, int t, int limit, boolean complete) {
            int end = Math.min(limit, t + WINDOW);
            var matcher = pattern.matcher(new Latin1View(d, t, end));
            boolean found = matcher.lookingAt();
            if (matcher.hitEnd() && !complete && end == limit) {
                return MORE;
            }
            if (!found || matcher.end() == 0) {
                return NO;
            }
            if (secretGroup) {
                int start = matcher.start(SECRET_GROUP);
                return start < 0 ? NO : span(t + start, t + matcher.end(SECRET_GROUP));
            }
            return span(t, t + matcher.end());
        }
    }

    /** Decoded bytes as chars 0–255, so a regex runs without copying. */
    record Latin1View(byte[] bytes, int from, int to) implements CharSequence {
        @Override
        public int length() {
            return to - from;
        }

        @Override
        public char charAt(int index) {
            return (char) (bytes[from + index] & 0xff);
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return new Latin1View(bytes, from + start, from + end);
        }

        @Override
        public String toString() {
            return new String(bytes, from, to - from, StandardCharsets.ISO_8859_1);
        }
    }

    // ---- helpers ------------------------------------------------------------------------------------

    static boolean startsWith(byte[] d, int at, byte[] what) {
        if (at < 0 || at + what.length > d.length) {
            return false;
        }
        for (int i = 0; i < what.length; i++) {
            if (d[at + i] != what[i]) {
                return false;
            }
        }
        return true;
    }

    static int indexOf(byte[] d, int from, int to, byte[] what) {
        for (int i = from; i + what.length <= to; i++) {
            if (startsWith(d, i, what)) {
                return i;
            }
        }
        return -1;
    }
}
