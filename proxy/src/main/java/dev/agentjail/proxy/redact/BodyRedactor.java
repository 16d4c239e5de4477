package dev.agentjail.proxy.redact;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Redacts one body as it streams: fed chunks of any size (a secret split across chunks is still found), it
 * releases the same number of bytes, each secret overwritten by a same-length marker. It holds back only
 * the bytes that could still belong to an undecided secret; see {@link #MAX_HOLD_BACK_DECODED}. One
 * instance per body, used from one thread.
 */
public final class BodyRedactor {
    /**
     * The most decoded bytes held back for an undecided secret (the longest rule span, a JWT); the raw
     * hold-back is at most six times this (every byte written as {@code \}{@code uXXXX}) plus one slice.
     */
    public static final int MAX_HOLD_BACK_DECODED = 3 * 8 * 1024 + 4;

    /**
     * Base64 or hex decodings nested below the body's own escapes that are read through; content that needs more is
     * refused ({@link Findings#DECODE_DEPTH}), never passed unread.
     */
    public static final int MAX_LAYER_DEPTH = 3;

    /** Base64 runs shorter than this (8 decoded bytes, the shortest known value) are not decoded. */
    static final int MIN_BASE64 = 11;
    /** Hex runs shorter than this (8 decoded bytes) are not decoded. */
    static final int MIN_HEX = 16;
    /** A run this long streams through its nested redactor; a shorter one is decoded and checked when it ends. */
    static final int STREAM_RUN = 256;
    /** A candidate region longer than this is read as it arrives instead of when it ends. */
    static final int SHORT_REGION = 1024;
    /** A first line at least this long is encoded data even when it is not a whole number of quanta. */
    static final int ALIGN_LINE = 16;

    /** {@link EncodedLayers#outside}, where the tests find it. */
    static long outside(long w) {
        return EncodedLayers.outside(w);
    }

    /** Input is processed in slices of at most this many bytes, whatever the caller's chunk size. */
    static final int SLICE = 32 * 1024;
    /** Decoded bytes kept before the first undecided position, for word-boundary checks. */
    private static final int CONTEXT = 8;

    final Redactor.Compiled engine;
    final Mode mode;
    final String location;
    final Findings findings;
    private final byte[] escapeOut = new byte[3];

    // Raw bytes not yet released; raw[0] is the first of them. rc: raw bytes up to here are decoded.
    private byte[] raw = new byte[256];
    private int rawLen;
    private int rc;
    private boolean queryStarted;

    // Decoded view, and where each of its bytes came from in raw.
    byte[] dec = new byte[256];
    int decLen;
    private final RawMap map = new RawMap();

    private int state;
    private int scanPos;

    // Triggers whose rule needs more bytes: decoded start and rule index.
    private int[] pendT = new int[8];
    private int[] pendRule = new int[8];
    private int pendCount;

    // Raw ranges already overwritten by a marker.
    private final Marks marks;

    private boolean finished;
    private long bytesIn;

    // Encoded layers: how many base64/hex decodings lie above this stream, and the runs being read.
    final int depth;
    private final EncodedLayers layers = new EncodedLayers(this);

    BodyRedactor(Redactor.Compiled engine, Mode mode, String location, Findings findings) {
        this(engine, mode, location, findings, 0);
    }

    BodyRedactor(Redactor.Compiled engine, Mode mode, String location, Findings findings, int depth) {
        this.engine = engine;
        this.mode = mode;
        this.location = location;
        this.findings = findings;
        this.state = engine.automaton.start;
        this.marks = new Marks(mode.urlSafeMarkers, location, findings);
        this.depth = depth;
    }

    /** Feeds {@code length} bytes; released bytes go to {@code out} before this returns. */
    public void feed(byte[] bytes, int offset, int length, ByteSink out) {
        if (finished) {
            throw new IllegalStateException("already finished");
        }
        java.util.Objects.checkFromIndexSize(offset, length, bytes.length);
        while (length > 0) {
            int n = Math.min(length, SLICE);
            ensureRaw(rawLen + n);
            System.arraycopy(bytes, offset, raw, rawLen, n);
            rawLen += n;
            bytesIn += n;
            process(false, out);
            offset += n;
            length -= n;
        }
    }

    /** Feeds the buffer's remaining bytes and advances its position. */
    public void feed(ByteBuffer buffer, ByteSink out) {
        if (finished) {
            throw new IllegalStateException("already finished");
        }
        while (buffer.hasRemaining()) {
            int n = Math.min(buffer.remaining(), SLICE);
            ensureRaw(rawLen + n);
            buffer.get(raw, rawLen, n);
            rawLen += n;
            bytesIn += n;
            process(false, out);
        }
    }

    /** Ends the body: decides every open trigger and releases the rest. */
    public void finish(ByteSink out) {
        if (finished) {
            return;
        }
        process(true, out);
        finished = true;
    }

    /** Bytes fed but not yet released; bounded as described in {@link #MAX_HOLD_BACK_DECODED}. */
    public int heldBack() {
        return rawLen;
    }

    public long bytesIn() {
        return bytesIn;
    }

    // ---- pipeline -----------------------------------------------------------------------------------

    private void process(boolean last, ByteSink out) {
        decode(last);
        resolvePending(last);
        scan(last);
        if (mode != Mode.PLAIN) {
            layers.detect(last);
        }
        release(last, out);
    }

    private void decode(boolean last) {
        ensureDec(decLen + (rawLen - rc) + 8);
        byte[] r = raw;
        byte[] d = dec;
        long[] masks = mode.specialMasks;
        if (masks.length == 0) {
            System.arraycopy(r, rc, d, decLen, rawLen - rc);
            decLen += rawLen - rc;
            rc = rawLen;
            return;
        }
        // Up to four special bytes; a mode with fewer repeats its first (a repeated test changes nothing).
        long m0 = masks[0];
        long m1 = masks[Math.min(1, masks.length - 1)];
        long m2 = masks[Math.min(2, masks.length - 1)];
        long m3 = masks[Math.min(3, masks.length - 1)];
        boolean three = masks.length > 2;
        boolean four = masks.length > 3;
        boolean backslash = mode.backslash;
        int n = decLen;
        int i = rc;
        int end = rawLen;
        while (i < end) {
            // Copy eight bytes at a time up to the next special byte (the word is stored whole; the bytes after the
            // special one are overwritten next).
            while (i + 8 <= end) {
                long x = (long) LONGS.get(r, i);
                LONGS.set(d, n, x);
                long hit = zeroBytes(x ^ m0) | zeroBytes(x ^ m1);
                if (three) {
                    hit |= zeroBytes(x ^ m2);
                    if (four) {
                        hit |= zeroBytes(x ^ m3);
                    }
                }
                if (hit != 0) {
                    int k = Long.numberOfTrailingZeros(hit) >>> 3;
                    i += k;
                    n += k;
                    break;
                }
                i += 8;
                n += 8;
            }
            if (i + 8 > end) {
                while (i < end && !mode.special[r[i] & 0xff]) {
                    d[n++] = r[i++];
                }
                if (i == end) {
                    break;
                }
            }
            byte b = r[i];
            if (b == '\\' && backslash && i + 1 < end) {
                // A one-character escape that yields neither '%' nor a backslash: Mode#nested reads it so, in one
                // round.
                byte simple = SIMPLE_ESCAPE[r[i + 1] & 0xff];
                if (simple != 0) {
                    map.add(n, i, i + 2);
                    d[n++] = simple;
                    i += 2;
                    continue;
                }
            }
            int result = mode.nested(r, i, end, escapeOut, last);
            if (result == Mode.INCOMPLETE && !last) {
                break;
            }
            if (result > 0) {
                int consumed = result >> 2;
                for (int k = 0; k < (result & 3); k++) {
                    map.add(n, i, i + consumed);
                    d[n++] = escapeOut[k];
                }
                i += consumed;
                continue;
            }
            if (b == '?') {
                queryStarted = true;
            } else if (b == '+' && (mode.plus || queryStarted)) {
                b = ' ';
            }
            d[n++] = b;
            i++;
        }
        decLen = n;
        rc = i;
    }

    /**
     * What a backslash and this byte decode to where that is one byte other than {@code %} and backslash (so no further
     * round reads it), else 0.
     */
    private static final byte[] SIMPLE_ESCAPE = new byte[256];

    static {
        SIMPLE_ESCAPE['n'] = '\n';
        SIMPLE_ESCAPE['t'] = '\t';
        SIMPLE_ESCAPE['r'] = '\r';
        SIMPLE_ESCAPE['b'] = '\b';
        SIMPLE_ESCAPE['f'] = '\f';
        SIMPLE_ESCAPE['/'] = '/';
        SIMPLE_ESCAPE['"'] = '"';
        SIMPLE_ESCAPE['\''] = '\'';
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    /** The high bit of each zero byte of {@code y}, exact up to the first (bits above it may be set wrongly). */
    private static long zeroBytes(long y) {
        return (y - ONES) & ~y & HIGHS;
    }

    private void resolvePending(boolean last) {
        int count = pendCount;
        if (count == 0) {
            return;
        }
        int[] ts = Arrays.copyOf(pendT, count);
        int[] rules = Arrays.copyOf(pendRule, count);
        pendCount = 0;
        for (int k = 0; k < count; k++) {
            check(rules[k], ts[k], last);
        }
    }

    private void scan(boolean last) {
        TriggerAutomaton ac = engine.automaton;
        int[] delta = ac.delta;
        int[] classOf = ac.classOf;
        int acceptBase = ac.acceptBase;
        long[] starts = ac.starts;
        int start = ac.start;
        int[] wordBefore = engine.wordBefore;
        byte[] d = dec;
        int st = state;
        int n = decLen;
        int i = scanPos;
        while (i < n) {
            if (st == start) {
                // In the start state, skip every position where no trigger can begin: no table walk there.
                // Each position's three bytes come from one four-byte load: no chain from one position to the next.
                int limit = n - 3;
                while (i < limit) {
                    int k = TriggerAutomaton.hash3((int) INTS_BE.get(d, i) >>> 8);
                    if (((starts[k >>> 6] >>> k) & 1L) != 0) {
                        break;
                    }
                    i++;
                }
                if (i == limit) {
                    int k = TriggerAutomaton.hash3((d[i] & 0xff) << 16 | (d[i + 1] & 0xff) << 8 | d[i + 2] & 0xff);
                    if (((starts[k >>> 6] >>> k) & 1L) == 0) {
                        i++;
                    }
                }
            }
            st = delta[st + classOf[d[i] & 0xff]];
            if (st >= acceptBase) {
                // Most trigger ends in prose are a trigger that needs a word boundary, inside a word ("ey" in "key").
                int back = wordBefore[st >> ac.shift];
                if (back == 0 || i < back || !Rule.WORD_BEFORE[d[i - back] & 0xff]) {
                    onTrigger(ac.outputs[st >> ac.shift], i, last);
                }
            }
            i++;
        }
        state = st;
        scanPos = n;
    }

    private static final VarHandle INTS_BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private void onTrigger(int[] ruleIds, int endIndex, boolean last) {
        for (int id : ruleIds) {
            Rule rule = engine.rules[id];
            int t = endIndex - rule.trigger.length + 1;
            if (rule.boundaryBefore && t > 0 && Rule.WORD_BEFORE[dec[t - 1] & 0xff]) {
                continue;
            }
            check(id, t, last);
        }
    }

    private void check(int id, int t, boolean last) {
        Rule rule = engine.rules[id];
        boolean complete = last || decLen - t >= rule.maxSpan;
        long result = rule.verify(dec, t, decLen, complete);
        if (result == Rule.MORE) {
            if (pendCount == pendT.length) {
                pendT = Arrays.copyOf(pendT, pendCount * 2);
                pendRule = Arrays.copyOf(pendRule, pendCount * 2);
            }
            pendT[pendCount] = t;
            pendRule[pendCount++] = id;
        } else if (result >= 0) {
            redact(Rule.spanStart(result), Rule.spanEnd(result), rule.kind, rule.trigger.length);
        }
    }

    /**
     * Overwrites the raw bytes of decoded span {@code [ds, de)}. Where two rules match from the same start,
     * the one with the longer trigger (the more specific) names the secret, whichever was decided first.
     */
    private void redact(int ds, int de, String kind, int priority) {
        if (de <= ds) {
            return;
        }
        if (!engine.allowed.isEmpty()
                && engine.allowed.contains(new String(dec, ds, de - ds, StandardCharsets.ISO_8859_1))) {
            return;
        }
        if (mode.clipAtQuote) {
            for (int k = ds; k < de; k++) {
                if (dec[k] == '"' && !map.escaped(k)) {
                    de = k;
                    break;
                }
            }
            if (de <= ds) {
                return;
            }
        }
        int rs = Math.max(0, map.rawStart(ds));
        int re = map.rawEnd(de - 1);
        marks.write(raw, rs, re, kind, priority);
    }

    private void release(boolean last, ByteSink out) {
        int bound;
        int live;
        int keep = Integer.MAX_VALUE;
        if (last) {
            bound = rawLen;
            live = decLen;
        } else {
            TriggerAutomaton ac = engine.automaton;
            live = decLen - ac.depth[state >> ac.shift] - engine.maxBack;
            for (int k = 0; k < pendCount; k++) {
                live = Math.min(live, pendT[k] - engine.rules[pendRule[k]].back);
            }
            live = Math.max(live, 0);
            keep = Math.min(live, layers.hold(false));
            live = Math.min(live, layers.hold(true));
            bound = live >= decLen ? rc : map.rawStart(live);
            bound = Math.max(0, Math.min(bound, rc));
        }
        if (bound > 0) {
            out.write(raw, 0, bound);
        }
        compact(bound, Math.min(Math.min(keep, live), decLen));
    }

    private void compact(int rawShift, int live) {
        if (rawShift > 0) {
            System.arraycopy(raw, rawShift, raw, 0, rawLen - rawShift);
            rawLen -= rawShift;
            rc -= rawShift;
            marks.shift(rawShift);
        }
        int keepFrom = Math.max(0, live - CONTEXT);
        if (keepFrom == 0 && rawShift == 0) {
            return;
        }
        int base = (keepFrom == decLen ? rc + rawShift : map.rawStart(keepFrom)) - rawShift;
        map.compact(keepFrom, rawShift, base);
        if (keepFrom > 0) {
            System.arraycopy(dec, keepFrom, dec, 0, decLen - keepFrom);
            decLen -= keepFrom;
            scanPos -= keepFrom;
            for (int k = 0; k < pendCount; k++) {
                pendT[k] -= keepFrom;
            }
            layers.shift(keepFrom);
        }
    }

    /** Writes {@code c} over the raw bytes of decoded character {@code i}, at the same length, or refuses. */
    void rewriteChar(int i, byte c) {
        int rs = map.rawStart(i);
        int re = map.rawEnd(i);
        if (rs < 0) {
            findings.refuse(
                    Findings.NOT_REWRITABLE,
                    "a secret in an encoded run in the " + location + " begins in bytes already sent");
            return;
        }
        byte[] hexDigits = {Alphabets.HEX_UPPER[(c >> 4) & 0xf], Alphabets.HEX_UPPER[c & 0xf]};
        if (re - rs == 1) {
            raw[rs] = c;
        } else if (re - rs == 3 && (raw[rs] == '%' || raw[rs] == '=' && mode.quotedPrintable)) {
            raw[rs + 1] = hexDigits[0];
            raw[rs + 2] = hexDigits[1];
        } else if (re - rs == 6 && (raw[rs] == '\\' || raw[rs] == '%') && (raw[rs + 1] | 0x20) == 'u') {
            raw[rs + 2] = '0';
            raw[rs + 3] = '0';
            raw[rs + 4] = hexDigits[0];
            raw[rs + 5] = hexDigits[1];
        } else {
            findings.refuse(
                    Findings.NOT_REWRITABLE,
                    "a secret in an encoded run in the " + location + " is written with escapes that cannot be"
                            + " rewritten at the same length");
        }
    }

    private void ensureRaw(int capacity) {
        if (capacity > raw.length) {
            raw = Arrays.copyOf(raw, Math.max(capacity, raw.length * 2));
        }
    }

    private void ensureDec(int capacity) {
        if (capacity > dec.length) {
            dec = Arrays.copyOf(dec, Math.max(capacity, dec.length * 2));
        }
    }
}
