package dev.agentjail.proxy.redact;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The body redactor as it was before the faster scan (commit 7c37a8b), kept unchanged as the reference of {@link
 * BodyRedactorDifferentialTest}: every speed-up must find exactly what this finds and write the same bytes.
 */
final class LegacyBodyRedactor {
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

    /** 1: a base64 character (either alphabet), 2: a line break, 0: anything else. */
    private static final byte[] REGION = new byte[256];

    private static final byte[] BASE64_VALUE = new byte[256];
    private static final byte[] HEX_VALUE = new byte[256];
    /** What may follow a backslash in an escape some receiver decodes. */
    private static final boolean[] ESCAPE_NEXT = new boolean[256];

    private static final byte[] BASE64_STD =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BASE64_URL =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX_LOWER = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX_UPPER = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);

    static {
        Arrays.fill(HEX_VALUE, (byte) -1);
        for (int k = 0; k < 64; k++) {
            BASE64_VALUE[BASE64_STD[k]] = (byte) k;
            BASE64_VALUE[BASE64_URL[k]] = (byte) k;
            REGION[BASE64_STD[k]] = 1;
            REGION[BASE64_URL[k]] = 1;
        }
        for (byte c : "uxnrtbf/\\\"'".getBytes(StandardCharsets.US_ASCII)) {
            ESCAPE_NEXT[c] = true;
        }
        REGION['\n'] = 2;
        REGION['\r'] = 2;
        for (int k = 0; k < 16; k++) {
            HEX_VALUE[HEX_LOWER[k]] = (byte) k;
            HEX_VALUE[HEX_UPPER[k]] = (byte) k;
        }
    }

    /** Input is processed in slices of at most this many bytes, whatever the caller's chunk size. */
    static final int SLICE = 32 * 1024;
    /** Decoded bytes kept before the first undecided position, for word-boundary checks. */
    private static final int CONTEXT = 8;

    private final Redactor.Compiled engine;
    private final Mode mode;
    private final String location;
    private final Findings findings;
    private final byte[] escapeOut = new byte[3];

    // Raw bytes not yet released; raw[0] is the first of them. rc: raw bytes up to here are decoded.
    private byte[] raw = new byte[256];
    private int rawLen;
    private int rc;
    private boolean queryStarted;

    // Decoded view. Decoded byte i maps to raw offsets through the escape events; without an event before
    // it, byte i starts at decRawBase + i.
    private byte[] dec = new byte[256];
    private int decLen;
    private int decRawBase;
    private int[] evDec = new int[16];
    private int[] evRawStart = new int[16];
    private int[] evRawEnd = new int[16];
    private int evCount;

    private int state;
    private int scanPos;

    // Triggers whose rule needs more bytes: decoded start and rule index.
    private int[] pendT = new int[8];
    private int[] pendRule = new int[8];
    private int pendCount;

    // Raw ranges already overwritten by a marker (relative to raw[0]).
    private int[] wStart = new int[8];
    private int[] wEnd = new int[8];
    private String[] wKind = new String[8];
    private int[] wPriority = new int[8];
    private int wCount;

    private boolean finished;
    private long bytesIn;

    // Encoded layers: how many base64/hex decodings lie above this stream, and the candidate region being read.
    private final int depth;
    private int layerPos;
    private int regionStart = -1;
    private int regionChars;
    private boolean regionStreaming;
    private EncodedRun base64;
    private EncodedRun hex;
    private final byte[] scratch = new byte[STREAM_RUN];

    LegacyBodyRedactor(Redactor.Compiled engine, Mode mode, String location, Findings findings) {
        this(engine, mode, location, findings, 0);
    }

    LegacyBodyRedactor(Redactor.Compiled engine, Mode mode, String location, Findings findings, int depth) {
        this.engine = engine;
        this.mode = mode;
        this.location = location;
        this.findings = findings;
        this.state = engine.automaton.start;
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
            detectLayers(last);
        }
        release(last, out);
    }

    private void decode(boolean last) {
        ensureDec(decLen + (rawLen - rc));
        byte[] r = raw;
        boolean[] special = mode.special;
        int i = rc;
        int end = rawLen;
        while (i < end) {
            int j = nextSpecial(r, i, end, special);
            if (j > i) {
                System.arraycopy(r, i, dec, decLen, j - i);
                decLen += j - i;
                i = j;
                if (i == end) {
                    break;
                }
            }
            byte b = r[i];
            int result = mode.nested(r, i, end, escapeOut, last);
            if (result == Mode.INCOMPLETE && !last) {
                break;
            }
            if (result > 0) {
                int consumed = result >> 2;
                for (int k = 0; k < (result & 3); k++) {
                    addEvent(decLen, i, i + consumed);
                    dec[decLen++] = escapeOut[k];
                }
                i += consumed;
                continue;
            }
            if (b == '?') {
                queryStarted = true;
            } else if (b == '+' && (mode.plus || queryStarted)) {
                b = ' ';
            }
            dec[decLen++] = b;
            i++;
        }
        rc = i;
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    /** First index in {@code [from, end)} holding a byte of the mode's special set, or {@code end}. */
    private int nextSpecial(byte[] r, int from, int end, boolean[] special) {
        long[] masks = mode.specialMasks;
        int i = from;
        if (masks.length == 0) {
            return end;
        }
        // eight bytes at a time: a byte equal to c makes (x ^ c) have a zero byte
        while (i + 8 <= end) {
            long x = (long) LONGS.get(r, i);
            long hit = 0;
            for (long mask : masks) {
                long y = x ^ mask;
                hit |= (y - ONES) & ~y & HIGHS;
            }
            if (hit != 0) {
                return i + (Long.numberOfTrailingZeros(hit) >>> 3);
            }
            i += 8;
        }
        while (i < end && !special[r[i] & 0xff]) {
            i++;
        }
        return i;
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
        byte[] d = dec;
        int st = state;
        int n = decLen;
        int i = scanPos;
        while (i < n) {
            if (st == start) {
                // In the start state, skip every position where no trigger can begin: no table walk there.
                int limit = n - 2;
                if (i < limit) {
                    int window = (d[i] & 0xff) << 8 | (d[i + 1] & 0xff);
                    while (i < limit) {
                        window = (window << 8 | (d[i + 2] & 0xff)) & 0xffffff;
                        int k = TriggerAutomaton.hash3(window);
                        if (((starts[k >>> 6] >>> k) & 1L) != 0) {
                            break;
                        }
                        i++;
                    }
                }
            }
            st = delta[st + classOf[d[i] & 0xff]];
            if (st >= acceptBase) {
                onTrigger(ac.outputs[st / ac.classes], i, last);
            }
            i++;
        }
        state = st;
        scanPos = n;
    }

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
                if (dec[k] == '"' && eventAt(k) < 0) {
                    de = k;
                    break;
                }
            }
            if (de <= ds) {
                return;
            }
        }
        int rs = Math.max(0, rawStart(ds));
        int re = rawEnd(de - 1);
        for (int w = 0; w < wCount; w++) {
            if (wStart[w] == rs && wEnd[w] <= re && wPriority[w] < priority) {
                Markers.fill(raw, rs, re - rs, kind, mode.urlSafeMarkers);
                findings.remove(wKind[w], location);
                findings.add(kind, location);
                wEnd[w] = re;
                wKind[w] = kind;
                wPriority[w] = priority;
                return;
            }
        }
        boolean wrote = false;
        int cur = rs;
        while (cur < re) {
            int skipTo = -1;
            int nextStart = re;
            for (int w = 0; w < wCount; w++) {
                if (wStart[w] <= cur && wEnd[w] > cur) {
                    skipTo = Math.max(skipTo, wEnd[w]);
                } else if (wStart[w] > cur && wStart[w] < nextStart) {
                    nextStart = wStart[w];
                }
            }
            if (skipTo >= 0) {
                cur = skipTo;
                continue;
            }
            Markers.fill(raw, cur, nextStart - cur, kind, mode.urlSafeMarkers);
            wrote = true;
            cur = nextStart;
        }
        if (wCount == wStart.length) {
            wStart = Arrays.copyOf(wStart, wCount * 2);
            wEnd = Arrays.copyOf(wEnd, wCount * 2);
            wKind = Arrays.copyOf(wKind, wCount * 2);
            wPriority = Arrays.copyOf(wPriority, wCount * 2);
        }
        wStart[wCount] = rs;
        wEnd[wCount] = re;
        wKind[wCount] = kind;
        wPriority[wCount++] = wrote ? priority : Integer.MAX_VALUE;
        if (wrote) {
            findings.add(kind, location);
        }
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
            live = decLen - ac.depth[state / ac.classes] - engine.maxBack;
            for (int k = 0; k < pendCount; k++) {
                live = Math.min(live, pendT[k] - engine.rules[pendRule[k]].back);
            }
            live = Math.max(live, 0);
            keep = Math.min(live, layerHold(false));
            live = Math.min(live, layerHold(true));
            bound = live >= decLen ? rc : rawStart(live);
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
            int kept = 0;
            for (int w = 0; w < wCount; w++) {
                if (wEnd[w] > rawShift) {
                    wStart[kept] = wStart[w] - rawShift;
                    wEnd[kept] = wEnd[w] - rawShift;
                    wKind[kept] = wKind[w];
                    wPriority[kept++] = wPriority[w];
                }
            }
            wCount = kept;
        }
        int keepFrom = Math.max(0, live - CONTEXT);
        if (keepFrom == 0 && rawShift == 0) {
            return;
        }
        int base = (keepFrom == decLen ? rc + rawShift : rawStart(keepFrom)) - rawShift;
        int firstKept = evCount;
        for (int e = 0; e < evCount; e++) {
            if (evDec[e] >= keepFrom) {
                firstKept = e;
                break;
            }
        }
        int keptEvents = evCount - firstKept;
        for (int e = 0; e < keptEvents; e++) {
            evDec[e] = evDec[firstKept + e] - keepFrom;
            evRawStart[e] = evRawStart[firstKept + e] - rawShift;
            evRawEnd[e] = evRawEnd[firstKept + e] - rawShift;
        }
        evCount = keptEvents;
        if (keepFrom > 0) {
            System.arraycopy(dec, keepFrom, dec, 0, decLen - keepFrom);
            decLen -= keepFrom;
            scanPos -= keepFrom;
            for (int k = 0; k < pendCount; k++) {
                pendT[k] -= keepFrom;
            }
            layerPos -= keepFrom;
            if (regionStart >= 0) {
                regionStart -= keepFrom;
            }
            if (base64 != null) {
                base64.shift(keepFrom);
                hex.shift(keepFrom);
            }
        }
        decRawBase = base;
    }

    // ---- encoded layers: base64 and hex ------------------------------------------------------------

    /**
     * Reads the decoded view for candidate regions (base64-alphabet characters, line breaks allowed between them) and
     * puts each base64 run, and each hex run inside it, through a nested redactor of its decoded bytes.
     */
    private void detectLayers(boolean last) {
        byte[] d = dec;
        int n = decLen;
        int i = layerPos;
        while (i < n) {
            if (regionStreaming) {
                if (REGION[d[i] & 0xff] == 0) {
                    endRegion();
                } else {
                    regionChar(i);
                }
                i++;
                continue;
            }
            if (regionStart < 0) {
                i = skipBlocks(d, i, n);
                while (i < n && REGION[d[i] & 0xff] != 1) {
                    i++;
                }
                if (i == n) {
                    break;
                }
                regionStart = i;
                regionChars = 0;
            }
            int chars = regionChars;
            while (i < n) {
                int c = REGION[d[i] & 0xff];
                if (c == 0) {
                    break;
                }
                chars += c & 1;
                i++;
            }
            regionChars = chars;
            if (i < n) {
                if (chars >= MIN_BASE64 && !quietLine(regionStart, i)) {
                    readRegion(regionStart, i);
                    endRegion();
                }
                regionStart = -1;
            } else if (i - regionStart > SHORT_REGION) {
                readRegion(regionStart, i);
                regionStart = -1;
                regionStreaming = base64 != null;
            }
        }
        layerPos = n;
        if (last) {
            if (regionStart >= 0 && regionChars >= MIN_BASE64) {
                readRegion(regionStart, n);
            }
            regionStart = -1;
            endRegion();
        } else if (base64 != null) {
            base64.flush();
            hex.flush();
        }
    }

    /**
     * Skips 64 bytes at a time while no run of {@link #MIN_BASE64} region bytes can lie in them: a bitmap of the bytes
     * outside the alphabet ({@link #outside}), then runs of clear bits found by shifts. Returns where the byte-wise
     * reading resumes, at the start of any run that reaches into the block where it stopped.
     */
    private static int skipBlocks(byte[] d, int i, int n) {
        int carry = 0;
        while (i + 64 <= n) {
            long outside = 0;
            for (int k = 0; k < 64; k += 8) {
                outside |= outside((long) LONGS.get(d, i + k)) << k;
            }
            long in = ~outside;
            long two = in & (in >>> 1);
            long four = two & (two >>> 2);
            long eight = four & (four >>> 4);
            long eleven = eight & (eight >>> 3);
            if (carry + Long.numberOfTrailingZeros(outside) >= MIN_BASE64) {
                return i - carry;
            }
            if (eleven != 0) {
                return i + Long.numberOfTrailingZeros(eleven);
            }
            carry = Long.numberOfLeadingZeros(outside);
            i += 64;
        }
        return i - carry;
    }

    private static final long LOW7 = 0x7f7f7f7f7f7f7f7fL;
    /** Multiplies the low bits of eight bytes into the top byte, byte k to bit 56 + k. */
    private static final long GATHER = 0x0102040810204080L;

    /**
     * Eight bits, bit k for byte k of the little-endian word {@code w}: set where the byte is certainly outside the
     * region's alphabet. Branch-free, with no table: with bit 5 cleared (so both letter cases coincide, and digits and
     * {@code +-/} fall below {@code 0x20}), a region byte lies in {@code 0x0A-0x19} or {@code 0x41-0x5F}. Those ranges
     * also hold a few bytes that are not (control characters, {@code *[\]^{|}~}): a byte counted in by mistake only
     * sends the caller to its exact byte-wise reading, never skips a run. {@code ,} and {@code .} (folded {@code 0x0C},
     * {@code 0x0E}) are taken out, being common between words.
     */
    static long outside(long w) {
        long high = w & HIGHS;
        long f = w & 0x5f5f5f5f5f5f5f5fL | HIGHS; // bit 5 cleared, bit 7 set: the subtractions below never borrow
        long low = (f - 0x0a0a0a0a0a0a0a0aL) & ~(f - 0x1a1a1a1a1a1a1a1aL);
        long letters = f - 0x4141414141414141L; // a folded byte is at most 0x5F
        long e = (f & 0x7d7d7d7d7d7d7d7dL) ^ 0x0c0c0c0c0c0c0c0cL; // zero for a folded 0x0C or 0x0E
        long punct = ~(e + LOW7); // high bit set where e is zero (e < 0x80, so no carry between bytes)
        long in = (low | letters) & ~punct & ~high & HIGHS;
        return ((~in & HIGHS) >>> 7) * GATHER >>> 56;
    }

    private void readRegion(int from, int to) {
        if (base64 == null) {
            base64 = new EncodedRun(false);
            hex = new EncodedRun(true);
        }
        for (int k = from; k < to; k++) {
            regionChar(k);
        }
    }

    private void regionChar(int i) {
        byte c = dec[i];
        if (c == '\n' || c == '\r') {
            base64.lineBreak(c);
            hex.lineBreak(c);
            return;
        }
        base64.accept(i);
        if (HEX_VALUE[c & 0xff] >= 0) {
            hex.accept(i);
        } else {
            hex.end();
        }
    }

    private void endRegion() {
        regionStreaming = false;
        if (base64 != null) {
            base64.end();
            hex.end();
        }
    }

    /**
     * The first decoded index an undecided layer may still rewrite ({@code release}: nothing from there is released), or
     * still needs to read. An open region shorter than a run is kept decoded but released, so a stream that pauses in
     * a word is not held; should it grow into a run whose secret reaches those bytes, the request is refused.
     */
    private int layerHold(boolean release) {
        int hold = regionStart >= 0 && (!release || regionChars >= MIN_BASE64) ? regionStart : Integer.MAX_VALUE;
        if (base64 != null) {
            hold = Math.min(hold, Math.min(base64.firstIndex(), hex.firstIndex()));
        }
        return hold;
    }

    /**
     * The common case made cheap: a short region on one line (an identifier, a word of code) whose base64 reading needs
     * no nested scan and that holds no hex run.
     */
    private boolean quietLine(int from, int to) {
        int length = to - from;
        if (length != regionChars || length >= STREAM_RUN) {
            return false;
        }
        byte[] d = dec;
        byte[] out = scratch;
        int produced = 0;
        int bits = 0;
        int hexRun = 0;
        int k = 0;
        for (int i = from; i < to; i++) {
            int c = d[i] & 0xff;
            hexRun = HEX_VALUE[c] >= 0 ? hexRun + 1 : 0;
            if (hexRun >= MIN_HEX) {
                return false;
            }
            bits = bits << 6 | BASE64_VALUE[c];
            if (++k == 4) {
                out[produced++] = (byte) (bits >> 16);
                out[produced++] = (byte) (bits >> 8);
                out[produced++] = (byte) bits;
                k = 0;
                bits = 0;
            }
        }
        if (k > 1) {
            bits <<= 6 * (4 - k);
            out[produced++] = (byte) (bits >> 16);
            if (k == 3) {
                out[produced++] = (byte) (bits >> 8);
            }
        }
        return !needsScan(out, produced);
    }

    /**
     * Whether decoded bytes need the full nested scan: a trigger, an escape or another candidate run in them. Most
     * short runs (identifiers, words of code) decode to noise and stop here.
     */
    private boolean needsScan(byte[] bytes, int length) {
        int run = 0;
        for (int k = 0; k < length; k++) {
            int b = bytes[k] & 0xff;
            if (b == '\\' && k + 1 < length && ESCAPE_NEXT[bytes[k + 1] & 0xff]
                    || b == '&' && k + 2 < length && bytes[k + 1] == '#'
                    || b == '%'
                            && k + 2 < length
                            && (HEX_VALUE[bytes[k + 1] & 0xff] >= 0 || (bytes[k + 1] | 0x20) == 'u')) {
                return true;
            }
            int c = REGION[b];
            run = c == 1 ? run + 1 : c == 0 ? 0 : run;
            if (run >= MIN_BASE64) {
                return true;
            }
        }
        return holdsTrigger(bytes, length);
    }

    /**
     * Whether a trigger lies in the bytes. The automaton is walked only from the first position that the start filter
     * lets through ({@link TriggerAutomaton#starts}, as in {@link #scan}): no trigger begins before it, and the filter
     * reads three bytes, so without a hit the walk covers the last two positions only.
     */
    private boolean holdsTrigger(byte[] bytes, int length) {
        TriggerAutomaton ac = engine.automaton;
        long[] starts = ac.starts;
        int from = Math.max(0, length - 2);
        for (int k = 0; k < length - 2; k++) {
            int h = TriggerAutomaton.hash3((bytes[k] & 0xff) << 16 | (bytes[k + 1] & 0xff) << 8 | bytes[k + 2] & 0xff);
            if (((starts[h >>> 6] >>> h) & 1L) != 0) {
                from = k;
                break;
            }
        }
        int st = ac.start;
        for (int k = from; k < length; k++) {
            st = ac.delta[st + ac.classOf[bytes[k] & 0xff]];
            if (st >= ac.acceptBase) {
                return true;
            }
        }
        return false;
    }

    /** Writes {@code c} over the raw bytes of decoded character {@code i}, at the same length, or refuses. */
    private void rewriteChar(int i, byte c) {
        int rs = rawStart(i);
        int re = rawEnd(i);
        if (rs < 0) {
            findings.refuse(
                    Findings.NOT_REWRITABLE,
                    "a secret in an encoded run in the " + location + " begins in bytes already sent");
            return;
        }
        byte[] hexDigits = {HEX_UPPER[(c >> 4) & 0xf], HEX_UPPER[c & 0xf]};
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

    /**
     * One base64 (standard and URL-safe alphabets together) or hex run of the decoded view: its characters' decoded
     * indices, their decoded bytes, and, once the run is long or its bytes look worth it, a nested redactor over them
     * whose markers are encoded back into the run's own alphabet.
     */
    private final class EncodedRun {
        private final boolean hexRun;
        private final int quantum;
        private final int perQuantum;
        private final int minimum;
        private final ByteSink collect = this::released;
        // Decoded indices of the characters not yet retired, and the bytes they decode to (whole quanta).
        private int[] index = new int[64];
        private int count;
        private byte[] bytes = new byte[64];
        private int byteCount;
        private int fed;
        private byte[] got = new byte[64];
        private int gotCount;
        private LegacyBodyRedactor nested;
        private long runChars;
        private int lineChars;
        private int lines;
        private boolean standard;
        private boolean urlSafe;
        private boolean upper;
        private boolean lower;

        EncodedRun(boolean hexRun) {
            this.hexRun = hexRun;
            this.quantum = hexRun ? 2 : 4;
            this.perQuantum = hexRun ? 1 : 3;
            this.minimum = hexRun ? MIN_HEX : MIN_BASE64;
        }

        int firstIndex() {
            return count > 0 ? index[0] : Integer.MAX_VALUE;
        }

        void shift(int by) {
            for (int k = 0; k < count; k++) {
                index[k] -= by;
            }
        }

        void accept(int i) {
            byte c = dec[i];
            if (c == '+' || c == '/') {
                standard = true;
            } else if (c == '-' || c == '_') {
                urlSafe = true;
            } else if (c >= 'a' && c <= 'z') {
                lower = true;
            } else if (c >= 'A' && c <= 'Z') {
                upper = true;
            }
            if (count == index.length) {
                index = Arrays.copyOf(index, count * 2);
            }
            index[count++] = i;
            runChars++;
            lineChars++;
            if (count % quantum == 0) {
                decodeQuantum(count - quantum, quantum);
            }
            if (nested == null && runChars >= STREAM_RUN) {
                if (depth >= MAX_LAYER_DEPTH) {
                    tooDeep();
                    reset();
                    return;
                }
                nested = new LegacyBodyRedactor(
                        engine, Mode.TEXT, location + (hexRun ? "/hex" : "/base64"), findings, depth + 1);
            }
        }

        /**
         * Line-wrapped encodings (MIME's 76 columns, {@code \n} escapes in JSON) read on across breaks; a blank line
         * ends the run, and so does a first line too short and unaligned to be encoded data (a word before the data).
         */
        void lineBreak(byte c) {
            if (c == '\r') {
                return;
            }
            if (lineChars == 0 || lines == 0 && lineChars % quantum != 0 && lineChars < ALIGN_LINE) {
                end();
                return;
            }
            lines++;
            lineChars = 0;
        }

        private void decodeQuantum(int from, int chars) {
            if (byteCount + 3 > bytes.length) {
                bytes = Arrays.copyOf(bytes, bytes.length * 2);
            }
            if (hexRun) {
                if (chars == 2) {
                    bytes[byteCount++] =
                            (byte) (HEX_VALUE[dec[index[from]] & 0xff] << 4 | HEX_VALUE[dec[index[from + 1]] & 0xff]);
                }
                return;
            }
            int bits = 0;
            for (int k = 0; k < chars; k++) {
                bits = bits << 6 | BASE64_VALUE[dec[index[from + k]] & 0xff];
            }
            bits <<= 6 * (4 - chars);
            int produced = chars - 1;
            for (int k = 0; k < produced; k++) {
                bytes[byteCount++] = (byte) (bits >> (16 - 8 * k));
            }
        }

        void flush() {
            if (nested != null && byteCount > fed) {
                nested.feed(bytes, fed, byteCount - fed, collect);
                fed = byteCount;
                retire(false);
            }
        }

        void end() {
            if (runChars >= minimum) {
                int tail = count % quantum;
                if (tail > 1) {
                    decodeQuantum(count - tail, tail);
                }
                if (nested == null && needsScan(bytes, byteCount) && depth >= MAX_LAYER_DEPTH) {
                    tooDeep();
                } else if (nested == null && needsScan(bytes, byteCount)) {
                    nested = new LegacyBodyRedactor(
                            engine, Mode.TEXT, location + (hexRun ? "/hex" : "/base64"), findings, depth + 1);
                }
                if (nested != null) {
                    nested.feed(bytes, fed, byteCount - fed, collect);
                    fed = byteCount;
                    nested.finish(collect);
                    retire(true);
                }
            }
            reset();
        }

        /**
         * At the deepest layer a run is decoded only to see whether it holds more (a trigger, an escape, another run):
         * then it would need one decoding more than the bound allows.
         */
        private void tooDeep() {
            findings.refuse(
                    Findings.DECODE_DEPTH,
                    "base64 or hex nested deeper than " + MAX_LAYER_DEPTH + " layers in the " + location
                            + " cannot be read through");
        }

        private void reset() {
            count = 0;
            byteCount = 0;
            fed = 0;
            gotCount = 0;
            nested = null;
            runChars = 0;
            lineChars = 0;
            lines = 0;
            standard = urlSafe = upper = lower = false;
        }

        private void released(byte[] source, int offset, int length) {
            if (gotCount + length > got.length) {
                got = Arrays.copyOf(got, Math.max(gotCount + length, got.length * 2));
            }
            System.arraycopy(source, offset, got, gotCount, length);
            gotCount += length;
        }

        /** Encodes back every released quantum the nested redactor changed, and forgets the settled ones. */
        private void retire(boolean all) {
            int quanta = all ? (gotCount + perQuantum - 1) / perQuantum : gotCount / perQuantum;
            for (int q = 0; q < quanta; q++) {
                int from = q * perQuantum;
                int to = Math.min(from + perQuantum, gotCount);
                if (!Arrays.equals(got, from, to, bytes, from, to)) {
                    encodeBack(q, from, to);
                }
            }
            int doneBytes = Math.min(quanta * perQuantum, gotCount);
            int doneChars = all ? count : quanta * quantum;
            System.arraycopy(index, doneChars, index, 0, count - doneChars);
            count -= doneChars;
            System.arraycopy(bytes, doneBytes, bytes, 0, byteCount - doneBytes);
            byteCount -= doneBytes;
            fed -= doneBytes;
            System.arraycopy(got, doneBytes, got, 0, gotCount - doneBytes);
            gotCount -= doneBytes;
        }

        private void encodeBack(int q, int from, int to) {
            int first = q * quantum;
            if (hexRun) {
                boolean up = upper && !lower;
                int b = got[from] & 0xff;
                byte[] digits = up ? HEX_UPPER : HEX_LOWER;
                put(first, digits[b >> 4]);
                put(first + 1, digits[b & 0xf]);
                return;
            }
            byte[] alphabet = urlSafe || (!standard && mode.urlSafeMarkers) ? BASE64_URL : BASE64_STD;
            int bits = 0;
            for (int k = from; k < from + 3; k++) {
                bits = bits << 8 | (k < to ? got[k] & 0xff : 0);
            }
            int chars = to - from + 1;
            for (int k = 0; k < chars; k++) {
                put(first + k, alphabet[(bits >> (18 - 6 * k)) & 0x3f]);
            }
        }

        private void put(int charIndex, byte c) {
            if (charIndex < count && dec[index[charIndex]] != c) {
                rewriteChar(index[charIndex], c);
            }
        }
    }

    // ---- decoded-to-raw mapping ---------------------------------------------------------------------

    private void addEvent(int decIndex, int rawStart, int rawEnd) {
        if (evCount == evDec.length) {
            evDec = Arrays.copyOf(evDec, evCount * 2);
            evRawStart = Arrays.copyOf(evRawStart, evCount * 2);
            evRawEnd = Arrays.copyOf(evRawEnd, evCount * 2);
        }
        evDec[evCount] = decIndex;
        evRawStart[evCount] = rawStart;
        evRawEnd[evCount++] = rawEnd;
    }

    /** Index of the last event at or before decoded index {@code i}, or -1. */
    private int lastEventAtOrBefore(int i) {
        int lo = 0;
        int hi = evCount - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (evDec[mid] <= i) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    private int eventAt(int i) {
        int e = lastEventAtOrBefore(i);
        return e >= 0 && evDec[e] == i ? e : -1;
    }

    private int rawStart(int i) {
        int e = lastEventAtOrBefore(i);
        if (e < 0) {
            return decRawBase + i;
        }
        return evDec[e] == i ? evRawStart[e] : evRawEnd[e] + (i - evDec[e] - 1);
    }

    private int rawEnd(int i) {
        int e = lastEventAtOrBefore(i);
        if (e >= 0 && evDec[e] == i) {
            return evRawEnd[e];
        }
        return rawStart(i) + 1;
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
