package dev.agentjail.proxy.inspect;

import java.util.Locale;
import java.util.Set;

/**
 * Tells from a body's first bytes whether a JSON parser would read it as UTF-16 or UTF-32 (a byte order mark, or a NUL
 * in either of its first two bytes, RFC 4627 section 3), as Python's {@code json.loads(bytes)} and Jackson do. The redaction scan reads
 * bytes as ASCII-compatible text, so such a body is refused rather than sent with secrets it could not see.
 */
final class WideText {
    static final int LEAD_BYTES = 4;

    /** Types of binary content, which no receiver reads as text in a wide encoding. */
    private static final Set<String> BINARY = Set.of(
            "application/octet-stream",
            "application/zip",
            "application/gzip",
            "application/x-gzip",
            "application/x-tar",
            "application/x-xz",
            "application/zstd",
            "application/pdf",
            "application/wasm",
            "application/protobuf",
            "application/x-protobuf",
            "application/x-git-upload-pack-request",
            "application/x-git-receive-pack-request");

    private WideText() {}

    /** The wide encoding {@code b[0, n)} starts in, or null (UTF-8 and ASCII-compatible text, or too short to tell). */
    static String encoding(byte[] b, int n) {
        if (n < 2) {
            return null;
        }
        int b0 = b[0] & 0xff;
        int b1 = b[1] & 0xff;
        if (n >= 4 && b0 == 0 && b1 == 0 && (b[2] & 0xff) == 0xfe && (b[3] & 0xff) == 0xff) {
            return "UTF-32BE";
        }
        if (n >= 4 && b0 == 0xff && b1 == 0xfe && b[2] == 0 && b[3] == 0) {
            return "UTF-32LE";
        }
        if (b0 == 0xfe && b1 == 0xff) {
            return "UTF-16BE";
        }
        if (b0 == 0xff && b1 == 0xfe) {
            return "UTF-16LE";
        }
        // RFC 4627's rule as JSON parsers apply it (Python's json.detect_encoding, Jackson): a NUL in either of the
        // first two bytes makes the text wide, whatever follows.
        if (b0 == 0) {
            return b1 != 0 ? "UTF-16BE" : "UTF-32BE";
        }
        if (b1 == 0) {
            boolean utf32 = n >= 4 && b[2] == 0 && b[3] == 0;
            return utf32 ? "UTF-32LE" : "UTF-16LE";
        }
        return null;
    }

    /** Whether {@code contentType} names binary content: images, audio, video, fonts, archives and the like. */
    static boolean binaryType(String contentType) {
        if (contentType == null) {
            return false;
        }
        String type = contentType.toLowerCase(Locale.ROOT);
        int semicolon = type.indexOf(';');
        type = (semicolon >= 0 ? type.substring(0, semicolon) : type).strip();
        return type.startsWith("image/")
                || type.startsWith("audio/")
                || type.startsWith("video/")
                || type.startsWith("font/")
                || BINARY.contains(type);
    }
}
