package dev.agentjail.proxy.redact;

import java.util.Arrays;

/**
 * One base64 (standard and URL-safe alphabets together) or hex run of the decoded view: its characters' decoded
 * indices, their decoded bytes, and, once the run is long or its bytes look worth it, a nested redactor over them
 * whose markers are encoded back into the run's own alphabet.
 */
final class EncodedRun {
    private final BodyRedactor owner;
    private final EncodedLayers layers;
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
    private BodyRedactor nested;
    /** Instead of {@link #nested}, when the layer's bytes are UTF-16 or UTF-32 text. */
    private WideLayer wide;

    private long runChars;
    private int lineChars;
    private int lines;
    private boolean standard;
    private boolean urlSafe;
    private boolean upper;
    private boolean lower;

    EncodedRun(BodyRedactor owner, EncodedLayers layers, boolean hexRun) {
        this.owner = owner;
        this.layers = layers;
        this.hexRun = hexRun;
        this.quantum = hexRun ? 2 : 4;
        this.perQuantum = hexRun ? 1 : 3;
        this.minimum = hexRun ? BodyRedactor.MIN_HEX : BodyRedactor.MIN_BASE64;
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
        byte c = owner.dec[i];
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
        if (!reading() && runChars >= BodyRedactor.STREAM_RUN) {
            if (owner.depth >= BodyRedactor.MAX_LAYER_DEPTH) {
                tooDeep();
                reset();
                return;
            }
            startReading();
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
        if (lineChars == 0 || lines == 0 && lineChars % quantum != 0 && lineChars < BodyRedactor.ALIGN_LINE) {
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
                bytes[byteCount++] = (byte) (Alphabets.HEX_VALUE[owner.dec[index[from]] & 0xff] << 4
                        | Alphabets.HEX_VALUE[owner.dec[index[from + 1]] & 0xff]);
            }
            return;
        }
        int bits = 0;
        for (int k = 0; k < chars; k++) {
            bits = bits << 6 | Alphabets.BASE64_VALUE[owner.dec[index[from + k]] & 0xff];
        }
        bits <<= 6 * (4 - chars);
        int produced = chars - 1;
        for (int k = 0; k < produced; k++) {
            bytes[byteCount++] = (byte) (bits >> (16 - 8 * k));
        }
    }

    private boolean reading() {
        return nested != null || wide != null;
    }

    /** Starts the nested read of this run's bytes: as wide text when they start as that, else as text. */
    private void startReading() {
        String location = owner.location + (hexRun ? "/hex" : "/base64");
        wide = WideLayer.of(owner, location, bytes, byteCount);
        if (wide == null) {
            nested = new BodyRedactor(owner.engine, Mode.TEXT, location, owner.findings, owner.depth + 1);
        }
    }

    private void feedNested() {
        if (wide != null) {
            wide.feed(bytes, fed, byteCount - fed, collect);
        } else {
            nested.feed(bytes, fed, byteCount - fed, collect);
        }
    }

    void flush() {
        if (reading() && byteCount > fed) {
            feedNested();
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
            boolean more = !reading() && layers.needsScan(bytes, byteCount);
            if (more && owner.depth >= BodyRedactor.MAX_LAYER_DEPTH) {
                tooDeep();
            } else if (more) {
                startReading();
            }
            if (reading()) {
                feedNested();
                fed = byteCount;
                if (wide != null) {
                    wide.finish(collect);
                } else {
                    nested.finish(collect);
                }
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
        owner.findings.refuse(
                Findings.DECODE_DEPTH,
                "base64 or hex nested deeper than " + BodyRedactor.MAX_LAYER_DEPTH + " layers in the " + owner.location
                        + " cannot be read through");
    }

    private void reset() {
        count = 0;
        byteCount = 0;
        fed = 0;
        gotCount = 0;
        nested = null;
        wide = null;
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
            byte[] digits = up ? Alphabets.HEX_UPPER : Alphabets.HEX_LOWER;
            put(first, digits[b >> 4]);
            put(first + 1, digits[b & 0xf]);
            return;
        }
        byte[] alphabet =
                urlSafe || (!standard && owner.mode.urlSafeMarkers) ? Alphabets.BASE64_URL : Alphabets.BASE64_STD;
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
        if (charIndex < count && owner.dec[index[charIndex]] != c) {
            owner.rewriteChar(index[charIndex], c);
        }
    }
}
