package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import org.junit.jupiter.api.Test;

class ContentCodingsTest {
    private static final ContentCodings.Limits LIMITS = ContentCodings.Limits.defaults();

    @Test
    void gzipRoundTripWithRedaction() throws Exception {
        String secret = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz";
        byte[] plain = ("{\"t\":\"" + secret + "\"}").getBytes(StandardCharsets.UTF_8);
        byte[] wire = ContentCodings.encode("gzip", plain);

        byte[] decoded = ContentCodings.decode("gzip", wire, LIMITS);
        assertArrayEquals(plain, decoded);
        Findings findings = new Findings();
        byte[] redacted = Redactor.builtIn().redactBody(decoded, BodyKind.JSON, "body", findings);
        byte[] again = ContentCodings.decode("gzip", ContentCodings.encode("gzip", redacted), LIMITS);

        assertEquals(1, findings.total());
        assertFalse(new String(again, StandardCharsets.UTF_8).contains("Ab1Cd2"));
        assertEquals(plain.length, again.length);
    }

    @Test
    void deflateZlibAndRawAndStackedCodings() throws Exception {
        byte[] plain = "hello hello hello deflate".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(plain, ContentCodings.decode("deflate", ContentCodings.encode("deflate", plain), LIMITS));
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        try (var out = new DeflaterOutputStream(raw, new Deflater(Deflater.DEFAULT_COMPRESSION, true))) {
            out.write(plain);
        }
        assertArrayEquals(plain, ContentCodings.decode("deflate", raw.toByteArray(), LIMITS));
        byte[] stacked = ContentCodings.encode("deflate, gzip", plain);
        assertArrayEquals(plain, ContentCodings.decode("Deflate , GZIP", stacked, LIMITS));
        assertArrayEquals(plain, ContentCodings.decode("identity", plain, LIMITS));
        assertTrue(ContentCodings.isIdentity(null));
        assertEquals(List.of("gzip"), ContentCodings.parse("identity, x-gzip"));
    }

    @Test
    void ratioBombIsRefused() throws Exception {
        byte[] zeros = new byte[8 * 1024 * 1024];
        byte[] bomb = ContentCodings.encode("gzip", zeros);
        var error = assertThrows(ContentCodingException.class, () -> ContentCodings.decode("gzip", bomb, LIMITS));
        assertEquals(ContentCodingException.Reason.RATIO_EXCEEDED, error.reason());
        assertEquals("compression-ratio-exceeded", error.reason().code());
    }

    @Test
    void decodedSizeCapIsEnforced() throws Exception {
        byte[] body = new byte[4096];
        new java.util.Random(1).nextBytes(body);
        byte[] wire = ContentCodings.encode("gzip", body);
        var limits = new ContentCodings.Limits(1000, 100, 0);
        var error = assertThrows(ContentCodingException.class, () -> ContentCodings.decode("gzip", wire, limits));
        assertEquals(ContentCodingException.Reason.DECODED_TOO_LARGE, error.reason());
    }

    @Test
    void unknownCodingsAreRefused() {
        for (String coding : List.of("br", "zstd", "compress", "gzip, br", "x-custom", ",")) {
            var error = assertThrows(
                    ContentCodingException.class, () -> ContentCodings.decode(coding, new byte[] {1, 2}, LIMITS));
            assertEquals(ContentCodingException.Reason.UNSUPPORTED_CODING, error.reason(), coding);
        }
    }

    @Test
    void malformedBodiesAreRefused() {
        for (String coding : List.of("gzip", "deflate")) {
            var error = assertThrows(
                    ContentCodingException.class,
                    () -> ContentCodings.decode(coding, "not compressed at all".getBytes(), LIMITS));
            assertEquals(ContentCodingException.Reason.MALFORMED, error.reason(), coding);
        }
    }
}
