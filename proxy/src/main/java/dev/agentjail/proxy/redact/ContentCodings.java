package dev.agentjail.proxy.redact;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.Inflater;
import java.util.zip.ZipException;

/**
 * Decodes {@code gzip}, {@code deflate} and {@code identity} bodies for inspection, with caps on the decoded
 * size and on the expansion ratio, and encodes the redacted result again. Any other coding ({@code br},
 * {@code zstd}, {@code compress}, …) is refused.
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
        return codings;
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

    private static byte[] gunzip(byte[] body, int wireLength, Limits limits) throws ContentCodingException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body), 8192)) {
            return drain(in, wireLength, limits);
        } catch (ZipException | java.io.EOFException malformed) {
            throw new ContentCodingException(ContentCodingException.Reason.MALFORMED, "malformed gzip body", malformed);
        } catch (IOException malformed) {
            throw new ContentCodingException(
                    ContentCodingException.Reason.MALFORMED, "unreadable gzip body", malformed);
        }
    }

    /** HTTP's "deflate" is zlib-wrapped; some senders use raw deflate, which is accepted too. */
    private static byte[] inflate(byte[] body, int wireLength, Limits limits) throws ContentCodingException {
        boolean zlib =
                body.length >= 2 && (body[0] & 0x0f) == 8 && (((body[0] & 0xff) << 8) | (body[1] & 0xff)) % 31 == 0;
        Inflater inflater = new Inflater(!zlib);
        try {
            inflater.setInput(body);
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, body.length * 2));
            byte[] buffer = new byte[8192];
            while (!inflater.finished()) {
                int n = inflater.inflate(buffer);
                if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    throw new ContentCodingException(ContentCodingException.Reason.MALFORMED, "truncated deflate body");
                }
                out.write(buffer, 0, n);
                checkCaps(out.size(), wireLength, limits);
            }
            return out.toByteArray();
        } catch (DataFormatException malformed) {
            throw new ContentCodingException(
                    ContentCodingException.Reason.MALFORMED, "malformed deflate body", malformed);
        } finally {
            inflater.end();
        }
    }

    private static byte[] drain(InputStream in, int wireLength, Limits limits)
            throws IOException, ContentCodingException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        int n;
        while ((n = in.read(buffer)) > 0) {
            out.write(buffer, 0, n);
            checkCaps(out.size(), wireLength, limits);
        }
        return out.toByteArray();
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
