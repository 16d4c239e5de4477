package dev.agentjail.proxy.audit;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import javax.crypto.Mac;
import javax.crypto.ShortBufferException;

/**
 * Turns a serialised record into a chained line: the chain fields go right after {@code "v"}, then (with a key) the
 * HMAC of the line without its own member; one SHA-256 of the finished line becomes the next line's {@code prev_hash}.
 * Not thread-safe: the writer calls it with its lock held, which is also what makes the chain a single sequence.
 */
final class ChainEncoder {

    private static final byte[] VERSION = "{\"v\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SEQ = ",\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PREV_HASH = ",\"prev_hash\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HMAC = ",\"hmac\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    static final int HASH_BYTES = 32;
    private static final int HMAC_MEMBER = HMAC.length + 2 * HASH_BYTES + 1;

    private final MessageDigest sha256 = sha256();
    private final Mac mac;
    private final byte[] lineHash = new byte[HASH_BYTES];
    private final byte[] tag = new byte[HASH_BYTES];

    /** @param mac the HMAC to sign every line with, or null for a log without a key */
    ChainEncoder(Mac mac) {
        this.mac = mac;
    }

    /**
     * The chained line for {@code json} ({@code {"v":N,…}\n} as {@link AuditJson} writes it), ending in a newline and,
     * if {@code leadingNewline}, starting with one that terminates a torn fragment before it. Afterwards
     * {@link #lineHash()} holds the SHA-256 of the line itself (without either newline).
     */
    byte[] encode(byte[] json, long seq, byte[] prevHash, boolean leadingNewline) {
        int split = versionEnd(json);
        byte[] seqDigits = Long.toString(seq).getBytes(StandardCharsets.US_ASCII);
        int macLength = mac == null ? 0 : HMAC_MEMBER;
        int lead = leadingNewline ? 1 : 0;
        int restLength = json.length - split; // from the first member after "v" through "}\n"
        byte[] out = new byte
                [lead
                        + split
                        + SEQ.length
                        + seqDigits.length
                        + PREV_HASH.length
                        + 2 * HASH_BYTES
                        + 1
                        + macLength
                        + restLength];
        int p = 0;
        if (leadingNewline) {
            out[p++] = '\n';
        }
        int lineStart = p;
        p = put(out, p, json, 0, split);
        p = put(out, p, SEQ, 0, SEQ.length);
        p = put(out, p, seqDigits, 0, seqDigits.length);
        p = put(out, p, PREV_HASH, 0, PREV_HASH.length);
        p = hex(out, p, prevHash);
        out[p++] = '"';
        int headEnd = p;
        System.arraycopy(json, split, out, headEnd + macLength, restLength);
        int lineEnd = out.length - 1;
        if (mac != null) {
            // The HMAC covers the line exactly as it would read without its own member.
            mac.update(out, lineStart, headEnd - lineStart);
            mac.update(out, headEnd + macLength, lineEnd - headEnd - macLength);
            try {
                mac.doFinal(tag, 0);
            } catch (ShortBufferException e) {
                throw new IllegalStateException(e);
            }
            p = put(out, headEnd, HMAC, 0, HMAC.length);
            p = hex(out, p, tag);
            out[p] = '"';
        }
        sha256.update(out, lineStart, lineEnd - lineStart);
        try {
            sha256.digest(lineHash, 0, HASH_BYTES);
        } catch (DigestException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** The SHA-256 of the line {@link #encode} returned last; a view, valid until the next call. */
    byte[] lineHash() {
        return lineHash;
    }

    /** The offset just past the digits of {@code "v"}; the chain fields are inserted there. */
    private static int versionEnd(byte[] json) {
        int n = json.length;
        boolean prefix = n > VERSION.length + 2 && json[n - 1] == '\n' && json[n - 2] == '}';
        for (int i = 0; prefix && i < VERSION.length; i++) {
            prefix = json[i] == VERSION[i];
        }
        int p = VERSION.length;
        while (prefix && p < n && json[p] >= '0' && json[p] <= '9') {
            p++;
        }
        if (!prefix || p == VERSION.length || (json[p] != ',' && json[p] != '}')) {
            throw new IllegalArgumentException("not an audit line starting with {\"v\":N");
        }
        return p;
    }

    private static int put(byte[] out, int at, byte[] from, int offset, int length) {
        System.arraycopy(from, offset, out, at, length);
        return at + length;
    }

    private static int hex(byte[] out, int at, byte[] bytes) {
        for (byte b : bytes) {
            out[at++] = HEX[(b >> 4) & 0xf];
            out[at++] = HEX[b & 0xf];
        }
        return at;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            // Every Java SE implementation must provide SHA-256.
            throw new IllegalStateException(e);
        }
    }
}
