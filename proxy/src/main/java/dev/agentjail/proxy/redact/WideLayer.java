package dev.agentjail.proxy.redact;

import java.util.Arrays;

/**
 * A base64 or hex layer whose decoded bytes are UTF-16 or UTF-32 text (a wide byte order mark, or the NUL pattern of
 * RFC 4627, section 3, in its first four bytes; not a lone NUL, as for a whole body: decoded binary often starts with
 * one) at its start: a receiver that stores the decoded file (GitHub's contents API) or parses it as
 * JSON reads it in that encoding, so it is read so here too. Each code unit becomes one byte for a nested scan (its
 * value below 0x80, else 0x80, which no rule matches), so positions stay one to one. Markers cannot be written back
 * into wide text through the layer's alphabet at the scan's alignment, so a secret found there refuses the request
 * ({@link Findings#NOT_REWRITABLE}); the layer's own bytes pass unchanged otherwise.
 */
final class WideLayer {
    private final BodyRedactor owner;
    private final BodyRedactor scan;
    private final String location;
    private final int unit;
    private final boolean bigEndian;
    private final ByteSink counted = this::scanned;
    // Layer bytes fed but not yet released by the scan (whole code units first, then a partial one).
    private byte[] pending = new byte[64];
    private int pendingLength;
    /** Bytes of {@link #pending} already given to the scan (whole code units). */
    private int narrowed;

    private byte[] narrow = new byte[64];
    private ByteSink out;

    private WideLayer(BodyRedactor owner, String location, int unit, boolean bigEndian, String name) {
        this.owner = owner;
        this.location = location + "/" + name;
        this.unit = unit;
        this.bigEndian = bigEndian;
        this.scan = new BodyRedactor(owner.engine, Mode.TEXT, this.location, owner.findings, owner.depth + 1);
    }

    /**
     * The wide layer for decoded bytes starting with {@code b[0, n)}, or null when they are not wide text (or too few
     * to tell: see {@link #detect}).
     */
    static WideLayer of(BodyRedactor owner, String location, byte[] b, int n) {
        return switch (detect(b, n)) {
            case UTF_16LE -> new WideLayer(owner, location, 2, false, "utf-16le");
            case UTF_16BE -> new WideLayer(owner, location, 2, true, "utf-16be");
            case UTF_32LE -> new WideLayer(owner, location, 4, false, "utf-32le");
            case UTF_32BE -> new WideLayer(owner, location, 4, true, "utf-32be");
            default -> null;
        };
    }

    static final int NARROW = 0;
    static final int UTF_16LE = 1;
    static final int UTF_16BE = 2;
    static final int UTF_32LE = 3;
    static final int UTF_32BE = 4;

    /**
     * The wide encoding decoded bytes {@code b[0, n)} start in, as JSON parsers detect it (a byte order mark, else
     * RFC 4627's NUL pattern in the first four bytes), or {@link #NARROW}; fewer than four bytes are wide only when they
     * start with a UTF-16 byte order mark that cannot begin a UTF-32 one.
     */
    static int detect(byte[] b, int n) {
        if (n < 2) {
            return NARROW;
        }
        int b0 = b[0] & 0xff;
        int b1 = b[1] & 0xff;
        if (n < 4) {
            if (b0 == 0xfe && b1 == 0xff) {
                return UTF_16BE;
            }
            return b0 == 0xff && b1 == 0xfe && n == 3 && b[2] != 0 ? UTF_16LE : NARROW;
        }
        int b2 = b[2] & 0xff;
        int b3 = b[3] & 0xff;
        if (b0 == 0 && b1 == 0 && (b2 == 0xfe && b3 == 0xff || b2 == 0 && b3 != 0)) {
            return UTF_32BE;
        }
        if (b0 == 0xff && b1 == 0xfe && b2 == 0 && b3 == 0 || b0 != 0 && b1 == 0 && b2 == 0 && b3 == 0) {
            return UTF_32LE;
        }
        if (b0 == 0xfe && b1 == 0xff || b0 == 0 && b1 != 0 && b2 == 0 && b3 != 0) {
            return UTF_16BE;
        }
        if (b0 == 0xff && b1 == 0xfe || b0 != 0 && b1 == 0 && b2 != 0 && b3 == 0) {
            return UTF_16LE;
        }
        return NARROW;
    }

    /** Feeds layer bytes; {@code released} gets them back, unchanged, once the scan has decided on them. */
    void feed(byte[] bytes, int offset, int length, ByteSink released) {
        if (pendingLength + length > pending.length) {
            pending = Arrays.copyOf(pending, Math.max(pendingLength + length, pending.length * 2));
        }
        System.arraycopy(bytes, offset, pending, pendingLength, length);
        pendingLength += length;
        int units = (pendingLength - narrowed) / unit;
        if (narrow.length < units) {
            narrow = Arrays.copyOf(narrow, Math.max(units, narrow.length * 2));
        }
        for (int k = 0; k < units; k++) {
            narrow[k] = narrow(narrowed + k * unit);
        }
        narrowed += units * unit;
        int before = owner.findings.total();
        out = released;
        scan.feed(narrow, 0, units, counted);
        check(before);
    }

    void finish(ByteSink released) {
        int before = owner.findings.total();
        out = released;
        scan.finish(counted);
        check(before);
        // A partial code unit at the end: no receiver reads a character from it.
        if (pendingLength > 0) {
            released.write(pending, 0, pendingLength);
            pendingLength = 0;
            narrowed = 0;
        }
    }

    private byte narrow(int at) {
        int value = 0;
        for (int k = 0; k < unit; k++) {
            int b = pending[at + (bigEndian ? k : unit - 1 - k)] & 0xff;
            value = value << 8 | b;
        }
        return value >= 0 && value < 0x80 ? (byte) value : (byte) 0x80;
    }

    /** The scan released {@code length} code units: their layer bytes go out unchanged. */
    private void scanned(byte[] ignored, int offset, int length) {
        int n = length * unit;
        out.write(pending, 0, n);
        System.arraycopy(pending, n, pending, 0, pendingLength - n);
        pendingLength -= n;
        narrowed -= n;
    }

    private void check(int before) {
        if (owner.findings.total() > before) {
            owner.findings.refuse(
                    Findings.NOT_REWRITABLE,
                    "a secret in " + location + " text cannot be rewritten there; send the file as UTF-8");
        }
    }
}
