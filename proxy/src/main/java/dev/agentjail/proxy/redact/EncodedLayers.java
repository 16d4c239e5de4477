package dev.agentjail.proxy.redact;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The encoded layers of one stream: reads its decoded view for candidate regions (base64-alphabet characters, line
 * breaks allowed between them) and puts each base64 run, and each hex run inside it, through a nested redactor of its
 * decoded bytes ({@link EncodedRun}).
 */
final class EncodedLayers {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long HIGHS = 0x8080808080808080L;

    private final BodyRedactor owner;
    private int layerPos;
    private int regionStart = -1;
    private int regionChars;
    private boolean regionStreaming;
    private EncodedRun base64;
    private EncodedRun hex;
    private final byte[] scratch = new byte[BodyRedactor.STREAM_RUN];
    // Quiet lines met before (see quietLine): lengths per slot (0: empty) and their bytes, made on first use.
    private byte[] quietLength;
    private byte[] quietBytes;

    EncodedLayers(BodyRedactor owner) {
        this.owner = owner;
    }

    /** Moves every decoded index held here down by {@code by}, as the owner drops that many decoded bytes. */
    void shift(int by) {
        layerPos -= by;
        if (regionStart >= 0) {
            regionStart -= by;
        }
        if (base64 != null) {
            base64.shift(by);
            hex.shift(by);
        }
    }

    /** Reads the decoded bytes not read yet; {@code last}: the body ends, every open run is decided. */
    void detect(boolean last) {
        byte[] d = owner.dec;
        int n = owner.decLen;
        int i = layerPos;
        while (i < n) {
            if (regionStreaming) {
                if (Alphabets.REGION[d[i] & 0xff] == 0) {
                    endRegion();
                } else {
                    regionChar(i);
                }
                i++;
                continue;
            }
            if (regionStart < 0) {
                i = skipBlocks(d, i, n);
                while (i < n && Alphabets.REGION[d[i] & 0xff] != 1) {
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
                int c = Alphabets.REGION[d[i] & 0xff];
                if (c == 0) {
                    break;
                }
                chars += c & 1;
                i++;
            }
            regionChars = chars;
            if (i < n) {
                if (chars >= BodyRedactor.MIN_BASE64 && !quietLine(regionStart, i)) {
                    readRegion(regionStart, i);
                    endRegion();
                }
                regionStart = -1;
            } else if (i - regionStart > BodyRedactor.SHORT_REGION) {
                readRegion(regionStart, i);
                regionStart = -1;
                regionStreaming = base64 != null;
            }
        }
        layerPos = n;
        if (last) {
            if (regionStart >= 0 && regionChars >= BodyRedactor.MIN_BASE64) {
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
     * Skips 64 bytes at a time while no run of {@link #BodyRedactor.MIN_BASE64} region bytes can lie in them: a bitmap of the bytes
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
            if (carry + Long.numberOfTrailingZeros(outside) >= BodyRedactor.MIN_BASE64) {
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
            base64 = new EncodedRun(owner, this, false);
            hex = new EncodedRun(owner, this, true);
        }
        for (int k = from; k < to; k++) {
            regionChar(k);
        }
    }

    private void regionChar(int i) {
        byte c = owner.dec[i];
        if (c == '\n' || c == '\r') {
            base64.lineBreak(c);
            hex.lineBreak(c);
            return;
        }
        base64.accept(i);
        if (Alphabets.HEX_VALUE[c & 0xff] >= 0) {
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
    int hold(boolean release) {
        int hold = regionStart >= 0 && (!release || regionChars >= BodyRedactor.MIN_BASE64)
                ? regionStart
                : Integer.MAX_VALUE;
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
        if (length != regionChars || length >= BodyRedactor.STREAM_RUN) {
            return false;
        }
        if (length > QUIET_WIDTH) {
            return readsQuiet(from, to);
        }
        // Whether a line is quiet depends on its bytes alone: a word of code met before is not decoded again.
        int slot = (int) (((long) LONGS.get(owner.dec, from) * 0x9E3779B97F4A7C15L
                                + (long) LONGS.get(owner.dec, to - 8)
                                + length)
                        * 0xC2B2AE3D27D4EB4FL
                >>> (64 - QUIET_SLOTS_LOG));
        if (quietLength != null
                && quietLength[slot] == length
                && Arrays.equals(quietBytes, slot * QUIET_WIDTH, slot * QUIET_WIDTH + length, owner.dec, from, to)) {
            return true;
        }
        if (!readsQuiet(from, to)) {
            return false;
        }
        if (quietLength == null) {
            quietLength = new byte[1 << QUIET_SLOTS_LOG];
            quietBytes = new byte[QUIET_WIDTH << QUIET_SLOTS_LOG];
        }
        System.arraycopy(owner.dec, from, quietBytes, slot * QUIET_WIDTH, length);
        quietLength[slot] = (byte) length;
        return true;
    }

    /** Lines of up to this many characters are remembered as quiet ({@link #quietLine}). */
    private static final int QUIET_WIDTH = 32;
    /** The quiet lines remembered: a direct-mapped table of this many (log 2) slots, the latest line in each. */
    private static final int QUIET_SLOTS_LOG = 6;

    /** {@link #quietLine} without the memory: decodes the line and checks the bytes. */
    private boolean readsQuiet(int from, int to) {
        byte[] d = owner.dec;
        byte[] out = scratch;
        int produced = 0;
        int bits = 0;
        int hexRun = 0;
        int k = 0;
        for (int i = from; i < to; i++) {
            int c = d[i] & 0xff;
            hexRun = Alphabets.HEX_VALUE[c] >= 0 ? hexRun + 1 : 0;
            if (hexRun >= BodyRedactor.MIN_HEX) {
                return false;
            }
            bits = bits << 6 | Alphabets.BASE64_VALUE[c];
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
    boolean needsScan(byte[] bytes, int length) {
        if (WideLayer.detect(bytes, length) != WideLayer.NARROW) {
            return true;
        }
        int run = 0;
        for (int k = 0; k < length; k++) {
            int b = bytes[k] & 0xff;
            if (b == '\\' && k + 1 < length && Alphabets.ESCAPE_NEXT[bytes[k + 1] & 0xff]
                    || b == '&' && k + 2 < length && bytes[k + 1] == '#'
                    || b == '%'
                            && k + 2 < length
                            && (Alphabets.HEX_VALUE[bytes[k + 1] & 0xff] >= 0 || (bytes[k + 1] | 0x20) == 'u')) {
                return true;
            }
            int c = Alphabets.REGION[b];
            run = c == 1 ? run + 1 : c == 0 ? 0 : run;
            if (run >= BodyRedactor.MIN_BASE64) {
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
        TriggerAutomaton ac = owner.engine.automaton;
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
}
