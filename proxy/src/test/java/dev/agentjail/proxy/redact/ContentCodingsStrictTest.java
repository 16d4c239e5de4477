package dev.agentjail.proxy.redact;

import static dev.agentjail.proxy.testing.Compressed.concat;
import static dev.agentjail.proxy.testing.Compressed.flip;
import static dev.agentjail.proxy.testing.Compressed.gzip;
import static dev.agentjail.proxy.testing.Compressed.raw;
import static dev.agentjail.proxy.testing.Compressed.zlib;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentjail.proxy.redact.ContentCodingException.Reason;
import dev.agentjail.proxy.testing.Compressed;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A compressed body is decoded completely or refused (issue 17 point 2): one gzip member or zlib/raw deflate
 * stream, every checksum verified, nothing after it. Each refused row is something {@code GZIPInputStream} or a
 * lenient receiver reads past or skips.
 */
class ContentCodingsStrictTest {
    private static final ContentCodings.Limits LIMITS = ContentCodings.Limits.defaults();
    private static final byte[] PLAIN =
            ("{\"prompt\":\"" + "hello world ".repeat(40) + "\"}").getBytes(StandardCharsets.UTF_8);
    private static final byte[] SECRET =
            ("token=ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8").getBytes(StandardCharsets.US_ASCII);

    static Stream<Arguments> decoded() {
        return Stream.of(
                Arguments.of("gzip, plain header", "gzip", gzip(PLAIN, 0)),
                Arguments.of("gzip, every optional header field", "gzip", gzip(PLAIN, 0x02 | 0x04 | 0x08 | 0x10)),
                Arguments.of("gzip, FTEXT set", "x-gzip", gzip(PLAIN, 0x01)),
                Arguments.of("zlib, default level", "deflate", zlib(PLAIN, Deflater.DEFAULT_COMPRESSION)),
                Arguments.of("zlib, level 1", "deflate", zlib(PLAIN, 1)),
                Arguments.of("zlib, level 9", "deflate", zlib(PLAIN, 9)),
                Arguments.of("raw deflate", "deflate", raw(PLAIN)),
                Arguments.of("deflate then gzip", "deflate, gzip", gzip(zlib(PLAIN, 6), 0)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void decoded(String name, String coding, byte[] wire) throws Exception {
        assertArrayEquals(PLAIN, ContentCodings.decode(coding, wire, LIMITS));
    }

    static Stream<Arguments> refused() {
        byte[] gz = gzip(PLAIN, 0);
        byte[] zl = zlib(PLAIN, 6);
        byte[] rw = raw(PLAIN);
        return Stream.of(
                // gzip: more after the member
                bad("two gzip members", "gzip", concat(gz, gzip(SECRET, 0)), Reason.TRAILING_DATA),
                bad(
                        "second member with a bad header CRC (java.util.zip skips it)",
                        "gzip",
                        concat(gz, flip(gzip(SECRET, 0x02), 10 + 0)),
                        Reason.TRAILING_DATA),
                bad("plain text after the member", "gzip", concat(gz, SECRET), Reason.TRAILING_DATA),
                bad("one zero byte of padding", "gzip", concat(gz, new byte[1]), Reason.TRAILING_DATA),
                bad("one byte of 0x1f", "gzip", concat(gz, new byte[] {0x1f}), Reason.TRAILING_DATA),
                // gzip: the member itself
                bad("bad CRC-32", "gzip", flip(gz, gz.length - 8), Reason.MALFORMED),
                bad("bad ISIZE", "gzip", flip(gz, gz.length - 1), Reason.MALFORMED),
                bad(
                        "bad header CRC",
                        "gzip",
                        flip(gzip(PLAIN, 0x02), Compressed.gzipHeaderLength(Compressed.FHCRC) - 1),
                        Reason.MALFORMED),
                bad("reserved flag", "gzip", withByte(gz, 3, 0x20), Reason.MALFORMED),
                bad("method other than deflate", "gzip", withByte(gz, 2, 7), Reason.MALFORMED),
                bad("bad magic", "gzip", withByte(gz, 1, 0x8c), Reason.MALFORMED),
                bad("truncated header", "gzip", Arrays.copyOf(gz, 6), Reason.MALFORMED),
                bad("file name never ends", "gzip", Arrays.copyOf(gzip(PLAIN, 0x08), 14), Reason.MALFORMED),
                bad("extra field longer than the body", "gzip", Arrays.copyOf(gzip(PLAIN, 0x04), 13), Reason.MALFORMED),
                bad("truncated in the stream", "gzip", Arrays.copyOf(gz, gz.length / 2), Reason.MALFORMED),
                bad("truncated trailer", "gzip", Arrays.copyOf(gz, gz.length - 1), Reason.MALFORMED),
                bad("no trailer", "gzip", Arrays.copyOf(gz, gz.length - 8), Reason.MALFORMED),
                bad("corrupt deflate data", "gzip", flip(gz, 12), Reason.MALFORMED),
                bad("empty", "gzip", new byte[0], Reason.MALFORMED),
                bad("not compressed", "gzip", PLAIN, Reason.MALFORMED),
                // zlib
                bad("two zlib streams", "deflate", concat(zl, zlib(SECRET, 6)), Reason.TRAILING_DATA),
                bad("plain text after the zlib stream", "deflate", concat(zl, SECRET), Reason.TRAILING_DATA),
                bad("bad Adler-32", "deflate", flip(zl, zl.length - 1), Reason.MALFORMED),
                bad("no Adler-32", "deflate", Arrays.copyOf(zl, zl.length - 4), Reason.MALFORMED),
                bad("truncated zlib stream", "deflate", Arrays.copyOf(zl, zl.length / 2), Reason.MALFORMED),
                bad("preset dictionary", "deflate", new byte[] {0x78, (byte) 0xbb, 0, 0, 0, 1, 3, 0}, Reason.MALFORMED),
                // raw deflate
                bad("plain text after raw deflate", "deflate", concat(rw, SECRET), Reason.TRAILING_DATA),
                bad("truncated raw deflate", "deflate", Arrays.copyOf(rw, rw.length - 3), Reason.MALFORMED),
                bad("empty deflate", "deflate", new byte[0], Reason.MALFORMED),
                // stacked: the inner layer is held to the same rule
                bad(
                        "inner layer with trailing data",
                        "deflate, gzip",
                        gzip(concat(zl, SECRET), 0),
                        Reason.TRAILING_DATA),
                bad(
                        "outer layer with trailing data",
                        "deflate, gzip",
                        concat(gzip(zl, 0), SECRET),
                        Reason.TRAILING_DATA));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void refused(String name, String coding, byte[] wire, Reason reason) {
        var error = assertThrows(ContentCodingException.class, () -> ContentCodings.decode(coding, wire, LIMITS));
        assertEquals(reason, error.reason(), error.getMessage());
    }

    @Test
    void theCanonicalCodingNamesWhatEncodeProduces() throws Exception {
        assertEquals("gzip", ContentCodings.canonical("X-GZIP"));
        assertEquals("deflate, gzip", ContentCodings.canonical("Deflate ,gzip"));
        assertEquals(null, ContentCodings.canonical("identity"));
        assertArrayEquals(
                PLAIN,
                ContentCodings.decode(
                        ContentCodings.canonical("x-gzip"), ContentCodings.encode("x-gzip", PLAIN), LIMITS));
    }

    @Test
    void moreLayersThanTheCapAreUninspectable() {
        var error =
                assertThrows(ContentCodingException.class, () -> ContentCodings.parse("gzip, gzip, gzip, gzip, gzip"));
        assertEquals(Reason.UNSUPPORTED_CODING, error.reason());
    }

    // ---- rows ----

    private static Arguments bad(String name, String coding, byte[] wire, Reason reason) {
        return Arguments.of(name, coding, wire, reason);
    }

    private static byte[] withByte(byte[] in, int index, int value) {
        byte[] out = in.clone();
        out[index] = (byte) value;
        return out;
    }
}
