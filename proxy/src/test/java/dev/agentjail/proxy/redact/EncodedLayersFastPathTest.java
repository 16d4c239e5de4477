package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shortcuts of the encoded-layer reading ({@link BodyRedactor}'s word bitmap, the start filter before the trigger
 * walk of a short run, {@link Mode#nested}'s single reading) never lose a secret at their edges.
 */
class EncodedLayersFastPathTest {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_\n\r";
    private static final String KNOWN = "k9!Zq#2w";
    private static final Redactor REDACTOR =
            Redactor.builder().knownValue("known:PIN", KNOWN).build();

    @Test
    void theWordBitmapNeverCountsARegionByteOut() {
        for (int b = 0; b < 256; b++) {
            for (int at = 0; at < 8; at++) {
                long word = 0x2020202020202020L & ~(0xffL << (8 * at)) | (long) b << (8 * at);
                boolean outside = (BodyRedactor.outside(word) >>> at & 1) != 0;
                if (ALPHABET.indexOf(b) >= 0) {
                    assertEquals(false, outside, "byte " + b + " at " + at);
                }
            }
        }
        // and it does tell the common separators out, or it would skip nothing
        for (char c : " .,\":(){=;".toCharArray()) {
            if (c != '{') {
                assertEquals(1L, BodyRedactor.outside(0x4141414141414100L | c) & 1, "byte " + (int) c);
            }
        }
    }

    @Test
    void aRunOfExactlyTheShortestLengthHoldingAKnownValueIsFound() {
        String run = Base64.getEncoder().withoutPadding().encodeToString(KNOWN.getBytes(StandardCharsets.ISO_8859_1));
        assertEquals(BodyRedactor.MIN_BASE64, run.length());
        for (String body : List.of(run, "a " + run + " b", run + "==", "x".repeat(100) + " " + run + "\n")) {
            assertFound(body, "body/base64");
        }
    }

    @Test
    void aSecretWhoseBase64StartsInsideAWordLikeRunIsFound() {
        // 24 letters, 6 whole quanta: the known value's base64 goes on in the same run, at a quantum boundary
        String word = "IllegalArgumentException";
        String secret =
                Base64.getEncoder().withoutPadding().encodeToString(KNOWN.getBytes(StandardCharsets.ISO_8859_1));
        assertFound("throw new " + word + secret + "(x);", "body/base64");
        // the known value as the last decoded bytes of the run, after noise, shortly after the start filter's window
        byte[] tail = new byte[10 + KNOWN.length()];
        System.arraycopy(KNOWN.getBytes(StandardCharsets.ISO_8859_1), 0, tail, 10, KNOWN.length());
        for (int noise = 0; noise < 256; noise += 17) {
            java.util.Arrays.fill(tail, 0, 10, (byte) noise);
            assertFound(" " + Base64.getEncoder().encodeToString(tail) + " ", "body/base64");
        }
    }

    @Test
    void doubleAndTripleEscapesAreStillReadThroughTheSingleReading() {
        String ghp = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz";
        for (String written : List.of(
                "%2567hp_", "%5Cu0067hp_", "\\u002567hp_", "%252567hp_", "%5C%75%30%30%36%37hp_", "\\u005Cu0067hp_")) {
            String body = "{\"a\":\"" + written + ghp.substring(4) + "\"}";
            Findings findings = new Findings();
            byte[] out = Redactor.builtIn()
                    .redactBody(body.getBytes(StandardCharsets.ISO_8859_1), BodyKind.JSON, "body", findings);
            assertEquals(List.of(new Findings.Finding("github-pat", "body", 1)), findings.list(), written);
            assertNotEquals(body, new String(out, StandardCharsets.ISO_8859_1));
        }
    }

    private static void assertFound(String body, String location) {
        Findings findings = new Findings();
        byte[] out = REDACTOR.redactBody(body.getBytes(StandardCharsets.ISO_8859_1), BodyKind.TEXT, "body", findings);
        assertEquals(List.of(new Findings.Finding("known:PIN", location, 1)), findings.list(), body);
        assertTrue(findings.refusal().isEmpty(), body);
        assertEquals(body.length(), out.length);
    }
}
