package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Numeric character references (XML and HTML parsers) are decoded in text, form and multipart bodies (not JSON, whose parsers do not read them): {@code &#103;}, {@code &#x67;},
 * either case of {@code x}, leading zeros, without the semicolon; the marker overwrites them, at the same length, in
 * every chunking. Named references and text that is no reference pass as they are.
 */
class CharacterReferencesTest {
    private static final String REST = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "TEXT|<v>&#x67;hp_REST</v>",
                "TEXT|<v>&#103;hp_REST</v>",
                "TEXT|<v>&#X67;&#x68;&#112;&#x5f;REST</v>",
                "TEXT|<v>gh&#x000070;_REST</v>",
                "TEXT|<v>&#103hp_REST</v>",
                "FORM|a=1&t=&#x67;hp_REST",
                "MULTIPART|--B =3D&#103;hp_REST --B--",
            })
    void aCharacterReferenceInATokenIsRedacted(String mode, String text) {
        String body = text.replace("REST", REST);
        for (int chunk : new int[] {1, 3, 1 << 20}) {
            String out = redact(Mode.valueOf(mode), body, chunk);
            assertEquals(body.length(), out.length());
            assertFalse(out.contains("A1b2C3d4"), out);
            assertTrue(out.contains("REDACTED"), out);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"a &amp; b", "x&#", "&#;", "&#x;", "&#0;", "a=1&b=2", "&#1114112;", "&#x"})
    void textThatIsNoReferencePassesAsItIs(String body) {
        assertEquals(body, redact(Mode.TEXT, body, 1));
        assertEquals(body, redact(Mode.FORM, body, 1 << 20));
    }

    private static String redact(Mode mode, String body, int chunk) {
        byte[] in = body.getBytes(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyRedactor r = new BodyRedactor(Redactor.builtIn().compiled(), mode, "body", new Findings());
        for (int k = 0; k < in.length; k += chunk) {
            r.feed(in, k, Math.min(chunk, in.length - k), out::write);
        }
        r.finish(out::write);
        return out.toString(StandardCharsets.ISO_8859_1);
    }
}
