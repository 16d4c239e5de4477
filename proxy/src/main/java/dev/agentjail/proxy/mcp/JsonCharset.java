package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.http.MediaType;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads JSON bytes in the encoding a JSON parser would pick for them, as UTF-8: a byte order mark decides (UTF-8,
 * UTF-16 BE/LE, UTF-32 BE/LE), else the pattern of zero bytes in the first four (RFC 4627 section 3, what Python's
 * {@code json.loads} and Jackson do: JSON text starts with two ASCII characters). Used by MCP detection, so that a
 * body a receiver's parser reads as a {@code tools/call} is seen as one here too.
 */
public final class JsonCharset {
    /** The encoding of a JSON text and the length of its byte order mark (0 when it has none). */
    record Detected(Charset charset, int bomLength) {}

    /** How many bytes of a JSON text tell its encoding (RFC 4627, section 3; a BOM is at most four). */
    static final int DETECTION_BYTES = 4;

    /**
     * Whether the start {@code in[0, length)}, shorter than {@link #DETECTION_BYTES}, may still turn out to be UTF-16
     * or UTF-32 (a NUL in its first two bytes, the start of a wide byte order mark, a single byte): then what it is
     * read as is not known yet. False for four bytes or more.
     */
    static boolean mayBeWide(byte[] in, int length) {
        if (length >= DETECTION_BYTES) {
            return false;
        }
        if (length < 2) {
            return true;
        }
        int b0 = in[0] & 0xff;
        int b1 = in[1] & 0xff;
        return b0 == 0 || b1 == 0 || (b0 == 0xfe && b1 == 0xff) || (b0 == 0xff && b1 == 0xfe);
    }

    private static final Charset UTF_32BE = Charset.forName("UTF-32BE");
    private static final Charset UTF_32LE = Charset.forName("UTF-32LE");

    private JsonCharset() {}

    /** The encoding of {@code in[0, length)} as a JSON parser detects it. */
    static Detected detect(byte[] in, int length) {
        int b0 = length > 0 ? in[0] & 0xff : -1;
        int b1 = length > 1 ? in[1] & 0xff : -1;
        int b2 = length > 2 ? in[2] & 0xff : -1;
        int b3 = length > 3 ? in[3] & 0xff : -1;
        if (b0 == 0xef && b1 == 0xbb && b2 == 0xbf) {
            return new Detected(StandardCharsets.UTF_8, 3);
        }
        if (b0 == 0 && b1 == 0 && b2 == 0xfe && b3 == 0xff) {
            return new Detected(UTF_32BE, 4);
        }
        if (b0 == 0xff && b1 == 0xfe && b2 == 0 && b3 == 0) {
            return new Detected(UTF_32LE, 4);
        }
        if (b0 == 0xfe && b1 == 0xff) {
            return new Detected(StandardCharsets.UTF_16BE, 2);
        }
        if (b0 == 0xff && b1 == 0xfe) {
            return new Detected(StandardCharsets.UTF_16LE, 2);
        }
        if (length >= 4) {
            if (b0 == 0 && b1 == 0 && b2 == 0) {
                return new Detected(UTF_32BE, 0);
            }
            if (b1 == 0 && b2 == 0 && b3 == 0) {
                return new Detected(UTF_32LE, 0);
            }
        }
        if (length >= 2) {
            if (b0 == 0 && b1 != 0) {
                return new Detected(StandardCharsets.UTF_16BE, 0);
            }
            if (b0 != 0 && b1 == 0) {
                return new Detected(StandardCharsets.UTF_16LE, 0);
            }
        }
        return new Detected(StandardCharsets.UTF_8, 0);
    }

    /**
     * {@code in[0, length)} without its byte order mark, read as {@code charset} and written as UTF-8. A body cut short
     * (a prefix) loses its last incomplete character; what cannot be decoded becomes U+FFFD, so that a lenient
     * receiver's reading is a reading of these bytes too. The result is {@code in} itself when nothing changes.
     */
    static byte[] toUtf8(byte[] in, int length, Detected detected) {
        return toUtf8(in, detected.bomLength(), length - detected.bomLength(), detected.charset());
    }

    /** As above for {@code in[offset, offset + length)} in {@code charset} (a declared one: no BOM is removed). */
    static byte[] toUtf8(byte[] in, int offset, int length, Charset charset) {
        if (charset.equals(StandardCharsets.UTF_8) && offset == 0 && length == in.length) {
            return in;
        }
        if (charset.equals(StandardCharsets.UTF_8)) {
            return java.util.Arrays.copyOfRange(in, offset, offset + length);
        }
        CharsetDecoder decoder = charset.newDecoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        CharBuffer chars = CharBuffer.allocate((int) Math.min(Integer.MAX_VALUE - 8, (long) length + 16));
        ByteBuffer bytes = ByteBuffer.wrap(in, offset, length);
        // Not flushed with endOfInput: an incomplete last character of a prefix is left out, not replaced.
        decoder.decode(bytes, chars, false);
        chars.flip();
        try {
            ByteBuffer out = StandardCharsets.UTF_8
                    .newEncoder()
                    .onMalformedInput(CodingErrorAction.REPLACE)
                    .onUnmappableCharacter(CodingErrorAction.REPLACE)
                    .encode(chars);
            byte[] utf8 = new byte[out.remaining()];
            out.get(utf8);
            return utf8;
        } catch (CharacterCodingException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** More declared charsets than this is no honest Content-Type: detection refuses the body. */
    static final int MAX_DECLARED = 8;

    /** {@code charset=value} wherever it appears, as a reader that splits on ';' or searches the text finds it. */
    private static final Pattern ANY_CHARSET =
            Pattern.compile("(?i)charset[ \\t]*=[ \\t]*(\"(?:[^\"\\\\]|\\\\.)*\"?|[^;,\\s\"]+)");

    /**
     * Every charset a receiver could read a body of type {@code contentType} in, that Java knows ({@link
     * #declaredNames}). Empty when there is none; names Java does not know are left out.
     */
    static List<Charset> declared(String contentType) {
        Set<Charset> out = new LinkedHashSet<>();
        for (String name : declaredNames(contentType)) {
            try {
                out.add(Charset.forName(name.strip()));
            } catch (IllegalArgumentException unknown) {
                // Not a reading Java can make; a receiver that cannot decode it refuses the body.
            }
        }
        return List.copyOf(out);
    }

    /**
     * Every charset name a receiver could read in {@code contentType}: the {@code charset} parameters of the RFC
     * 9110 parse (all of them when it is repeated), and every {@code charset=} anywhere in the value, quoted or not,
     * escapes undone or not, as splitters that ignore quotes, lenient parsers of a malformed list and substring
     * searches read it.
     */
    public static Set<String> declaredNames(String contentType) {
        Set<String> names = new LinkedHashSet<>();
        if (contentType == null) {
            return names;
        }
        try {
            names.addAll(MediaType.parse(contentType).values("charset"));
        } catch (MediaType.Malformed e) {
            // Every reading below is one some receiver could make of it.
        }
        Matcher m = ANY_CHARSET.matcher(contentType);
        while (m.find()) {
            String value = m.group(1);
            if (value.startsWith("\"")) {
                String inner =
                        value.substring(1, value.length() - (value.length() > 1 && value.endsWith("\"") ? 1 : 0));
                names.add(inner);
                names.add(inner.replaceAll("\\\\(.)", "$1"));
            } else {
                names.add(value);
            }
        }
        return names;
    }

    /**
     * Why a body of type {@code contentType} might be read as something other than UTF-8, or null when every reading
     * of it is UTF-8 (no charset, or {@code utf-8} / {@code utf8} in any case, quoted or not): a charset named more
     * than once, anywhere, and, when {@code strictSyntax}, a value that is not one well-formed media type. {@code
     * what}: the message the body is, for the explanation.
     */
    static String utf8Problem(String contentType, boolean strictSyntax, String what) {
        if (contentType == null) {
            return null;
        }
        try {
            MediaType type = MediaType.parse(contentType);
            if (type.values("charset").size() > 1) {
                return what + "'s Content-Type names its charset more than once";
            }
        } catch (MediaType.Malformed e) {
            if (strictSyntax) {
                return what + "'s Content-Type is not one well-formed media type (" + e.getMessage() + ")";
            }
        }
        for (String name : declaredNames(contentType)) {
            if (!name.equalsIgnoreCase("utf-8") && !name.equalsIgnoreCase("utf8")) {
                return what + "'s Content-Type declares charset '" + McpGate.printable(name)
                        + "': the proxy reads it as UTF-8 only";
            }
        }
        Matcher m = ANY_CHARSET.matcher(contentType);
        int seen = 0;
        while (m.find()) {
            seen++;
        }
        return seen > 1 ? what + "'s Content-Type names its charset more than once" : null;
    }
}
