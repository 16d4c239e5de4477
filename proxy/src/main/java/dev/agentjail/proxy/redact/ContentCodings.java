package dev.agentjail.proxy.redact;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.Checksum;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.Inflater;

/**
 * Decodes {@code gzip}, {@code deflate} and {@code identity} bodies for inspection, completely or not at all
 * (one gzip member or zlib stream, checksums verified, nothing after it), with caps on the decoded size and on
 * the expansion ratio, and encodes the scanned result again. Any other coding ({@code br}, {@code zstd},
 * {@code compress}, …) is refused.
 */
public final class ContentCodings {
    /**
     * Caps for decoding.
     *
     * @param maxDecodedBytes the decoded body may not exceed this
     * @param maxRatio decoded size over encoded size may not exceed this …
     * @param ratioFreeBytes … once the decoded size is above this (small bodies compress well legitimately)
     */
    public record Limits(long maxDecodedBytes, int maxRatio, long ratioFreeBytes) {
        public Limits {
            if (maxDecodedBytes < 1 || maxRatio < 1 || ratioFreeBytes < 0) {
                throw new IllegalArgumentException("limits must be positive");
            }
        }

        /** 32 MiB decoded, ratio 100 above 1 MiB. */
        public static Limits defaults() {
            return new Limits(32L * 1024 * 1024, 100, 1024 * 1024);
        }
    }

    /** Layers of coding decoded at most; every real client sends one. */
    static final int MAX_CODINGS = 4;

    private static final int GZIP_HEADER = 10;
    private static final int GZIP_TRAILER = 8;
    private static final int GZIP_FHCRC = 0x02;
    private static final int GZIP_FEXTRA = 0x04;
    private static final int GZIP_FNAME = 0x08;
    private static final int GZIP_FCOMMENT = 0x10;
    private static final int GZIP_RESERVED = 0xe0;

    private ContentCodings() {}

    /**
     * Parses a {@code Content-Encoding} value into the codings in the order they were applied; {@code null}
     * or blank is no coding.
     *
     * @throws ContentCodingException {@link ContentCodingException.Reason#UNSUPPORTED_CODING} for anything
     *     but gzip, x-gzip, deflate and identity
     */
    public static List<String> parse(String contentEncoding) throws ContentCodingException {
        List<String> codings = new ArrayList<>();
        if (contentEncoding == null || contentEncoding.isBlank()) {
            return codings;
        }
        for (String part : contentEncoding.split(",", -1)) {
            String coding = part.strip().toLowerCase(Locale.ROOT);
            switch (coding) {
                case "identity" -> {}
                case "gzip", "x-gzip" -> codings.add("gzip");
                case "deflate" -> codings.add("deflate");
                default ->
                    throw new ContentCodingException(
                            ContentCodingException.Reason.UNSUPPORTED_CODING,
                            "content coding not inspectable: " + (coding.isEmpty() ? "(empty)" : coding));
            }
        }
        if (codings.size() > MAX_CODINGS) {
            throw new ContentCodingException(
                    ContentCodingException.Reason.UNSUPPORTED_CODING,
                    "more than " + MAX_CODINGS + " content codings are not inspected");
        }
        return codings;
    }

    /**
     * The {@code Content-Encoding} value that names what {@link #encode} produces for {@code contentEncoding}:
     * the codings in order, lower case, {@code x-gzip} as {@code gzip}, {@code identity} left out (null when
     * nothing is left).
     */
    public static String canonical(String contentEncoding) throws ContentCodingException {
        List<String> codings = parse(contentEncoding);
        return codings.isEmpty() ? null : String.join(", ", codings);
    }

    /** True when the value names no coding at all (absent, blank or only {@code identity}). */
    public static boolean isIdentity(String contentEncoding) throws ContentCodingException {
        return parse(contentEncoding).isEmpty();
    }

    /** Undoes every coding in {@code contentEncoding}, last applied first, within {@code limits}. */
    public static byte[] decode(String contentEncoding, byte[] encoded, Limits limits) throws ContentCodingException {
        List<String> codings = parse(contentEncoding);
        byte[] body = encoded;
        for (int i = codings.size() - 1; i >= 0; i--) {
            body = switch (codings.get(i)) {
                case "gzip" -> gunzip(body, encoded.length, limits);
                default -> inflate(body, encoded.length, limits);
            };
        }
        return body;
    }

    /** Applies the codings of {@code contentEncoding} again, in order (the result's length may differ). */
    public static byte[] encode(String contentEncoding, byte[] plain) throws ContentCodingException {
        byte[] body = plain;
        for (String coding : parse(contentEncoding)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, body.length / 2));
            try (var stream = coding.equals("gzip")
                    ? new GZIPOutputStream(out)
                    : new DeflaterOutputStream(out, new Deflater(Deflater.DEFAULT_COMPRESSION, false), true)) {
                stream.write(body);
            } catch (IOException impossible) {
                throw new IllegalStateException(impossible);
            }
            body = out.toByteArray();
        }
        return body;
    }

    /**
     * Exactly one RFC 1952 member, checked byte for byte: header flags and header CRC, a deflate stream that ends,
     * the CRC-32 and ISIZE of what it decoded to, and nothing after it. {@code java.util.zip.GZIPInputStream} reads
     * on into further members and skips a bad one; some receivers stop after the first: either way one of them
     * would read bytes the other did not, so a second member, or any byte after the trailer, is refused.
     */
    private static byte[] gunzip(byte[] body, int wireLength, Limits limits) throws ContentCodingException {
        if (body.length < GZIP_HEADER) {
            throw malformed("truncated gzip header");
        }
        if ((body[0] & 0xff) != 0x1f || (body[1] & 0xff) != 0x8b) {
            throw malformed("not a gzip member");
        }
        if (body[2] != 8) {
            throw malformed("gzip compression method is not deflate");
        }
        int flags = body[3] & 0xff;
        if ((flags & GZIP_RESERVED) != 0) {
            throw malformed("reserved gzip header flags set");
        }
        int pos = GZIP_HEADER;
        if ((flags & GZIP_FEXTRA) != 0) {
            need(body, pos, 2, "gzip extra field");
            pos += 2 + (body[pos] & 0xff | (body[pos + 1] & 0xff) << 8);
            need(body, pos, 0, "gzip extra field");
        }
        if ((flags & GZIP_FNAME) != 0) {
            pos = afterZero(body, pos, "gzip file name");
        }
        if ((flags & GZIP_FCOMMENT) != 0) {
            pos = afterZero(body, pos, "gzip comment");
        }
        if ((flags & GZIP_FHCRC) != 0) {
            need(body, pos, 2, "gzip header CRC");
            CRC32 crc = new CRC32();
            crc.update(body, 0, pos);
            if ((crc.getValue() & 0xffff) != (body[pos] & 0xff | (body[pos + 1] & 0xff) << 8)) {
                throw malformed("gzip header CRC does not match");
            }
            pos += 2;
        }
        CRC32 crc = new CRC32();
        Inflater inflater = new Inflater(true);
        try {
            inflater.setInput(body, pos, body.length - pos);
            byte[] plain = inflateAll(inflater, crc, wireLength, limits, "gzip");
            int trailer = body.length - inflater.getRemaining();
            need(body, trailer, GZIP_TRAILER, "gzip trailer");
            if (crc.getValue() != (le32(body, trailer) & 0xffffffffL)) {
                throw malformed("gzip CRC-32 does not match the decoded body");
            }
            if ((plain.length & 0xffffffffL) != (le32(body, trailer + 4) & 0xffffffffL)) {
                throw malformed("gzip ISIZE does not match the decoded length");
            }
            int after = trailer + GZIP_TRAILER;
            if (after < body.length) {
                boolean member =
                        body.length - after >= 2 && (body[after] & 0xff) == 0x1f && (body[after + 1] & 0xff) == 0x8b;
                throw trailing(
                        member
                                ? "a second gzip member follows the first"
                                : (body.length - after) + " bytes follow the gzip member");
            }
            return plain;
        } finally {
            inflater.end();
        }
    }

    /**
     * HTTP's "deflate" is a zlib stream (RFC 1950), checked like a gzip member: header, a stream that ends, the
     * Adler-32 and nothing after it. Some senders use raw deflate (RFC 1951): accepted when the first two bytes are
     * no zlib header, and then too the stream must end and nothing may follow it. Either way the proxy forwards
     * its own zlib encoding of what it scanned, never these bytes.
     */
    private static byte[] inflate(byte[] body, int wireLength, Limits limits) throws ContentCodingException {
        boolean zlib = body.length >= 2
                && (body[0] & 0x0f) == 8
                && (body[0] & 0xff) >>> 4 <= 7
                && (((body[0] & 0xff) << 8) | (body[1] & 0xff)) % 31 == 0;
        if (zlib && (body[1] & 0x20) != 0) {
            throw malformed("zlib stream needs a preset dictionary");
        }
        int pos = zlib ? 2 : 0;
        Adler32 adler = new Adler32();
        Inflater inflater = new Inflater(true);
        try {
            inflater.setInput(body, pos, body.length - pos);
            byte[] plain = inflateAll(inflater, adler, wireLength, limits, "deflate");
            int after = body.length - inflater.getRemaining();
            if (zlib) {
                need(body, after, 4, "zlib Adler-32");
                long expected = (body[after] & 0xffL) << 24
                        | (body[after + 1] & 0xffL) << 16
                        | (body[after + 2] & 0xffL) << 8
                        | (body[after + 3] & 0xffL);
                if (adler.getValue() != expected) {
                    throw malformed("zlib Adler-32 does not match the decoded body");
                }
                after += 4;
            }
            if (after < body.length) {
                throw trailing((body.length - after) + " bytes follow the deflate stream");
            }
            return plain;
        } finally {
            inflater.end();
        }
    }

    /** Inflates until the deflate stream's last block ends; input that runs out first is a truncated body. */
    private static byte[] inflateAll(Inflater inflater, Checksum sum, int wireLength, Limits limits, String coding)
            throws ContentCodingException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, wireLength * 2));
        byte[] buffer = new byte[8192];
        try {
            while (!inflater.finished()) {
                int n = inflater.inflate(buffer);
                if (n == 0) {
                    if (inflater.needsDictionary()) {
                        throw malformed(coding + " stream needs a preset dictionary");
                    }
                    if (inflater.needsInput()) {
                        throw malformed("truncated " + coding + " body");
                    }
                    if (!inflater.finished()) {
                        // No progress and no reason: never loop on it.
                        throw malformed("unreadable " + coding + " body");
                    }
                }
                out.write(buffer, 0, n);
                sum.update(buffer, 0, n);
                checkCaps(out.size(), wireLength, limits);
            }
        } catch (DataFormatException e) {
            throw new ContentCodingException(
                    ContentCodingException.Reason.MALFORMED, "malformed " + coding + " body", e);
        }
        return out.toByteArray();
    }

    private static void need(byte[] body, int pos, int count, String what) throws ContentCodingException {
        if (pos < 0 || (long) pos + count > body.length) {
            throw malformed("truncated " + what);
        }
    }

    private static int afterZero(byte[] body, int pos, String what) throws ContentCodingException {
        for (int i = pos; i < body.length; i++) {
            if (body[i] == 0) {
                return i + 1;
            }
        }
        throw malformed("truncated " + what);
    }

    private static int le32(byte[] b, int i) {
        return b[i] & 0xff | (b[i + 1] & 0xff) << 8 | (b[i + 2] & 0xff) << 16 | (b[i + 3] & 0xff) << 24;
    }

    private static ContentCodingException malformed(String detail) {
        return new ContentCodingException(ContentCodingException.Reason.MALFORMED, detail);
    }

    private static ContentCodingException trailing(String detail) {
        return new ContentCodingException(ContentCodingException.Reason.TRAILING_DATA, detail);
    }

    private static void checkCaps(long decoded, int wireLength, Limits limits) throws ContentCodingException {
        if (decoded > limits.maxDecodedBytes()) {
            throw new ContentCodingException(
                    ContentCodingException.Reason.DECODED_TOO_LARGE,
                    "decoded body exceeds " + limits.maxDecodedBytes() + " bytes");
        }
        if (decoded > limits.ratioFreeBytes() && decoded > (long) Math.max(1, wireLength) * limits.maxRatio()) {
            throw new ContentCodingException(
                    ContentCodingException.Reason.RATIO_EXCEEDED,
                    "decoded body expands more than " + limits.maxRatio() + " times");
        }
    }
}
