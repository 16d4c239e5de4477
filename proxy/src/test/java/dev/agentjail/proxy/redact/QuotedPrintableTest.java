package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A multipart body is read as MIME parsers read a quoted-printable part: {@code =XX} in either case, soft line breaks
 * ({@code =} CRLF or LF) dropped. The token is found however it is split, in every chunking, and the output keeps its
 * length.
 */
class QuotedPrintableTest {
    private static final String REST = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    @ParameterizedTest
    @ValueSource(
            strings = {
                "=67hp_REST",
                "gh=\r\np_REST",
                "gh=\np_REST",
                "ghp_A1b2C3d4=\r\nE5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
                "g=\r\n=68p_REST",
                "=67=68=70=5fREST",
                "=67=68=70=5F=\r\n=\r\nREST",
                "gh=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\n=\r\np_REST",
            })
    void aQuotedPrintableTokenIsRedacted(String value) {
        String body = "--B\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\ntoken=3D" + value.replace("REST", REST)
                + "\r\n--B--\r\n";
        for (int chunk : new int[] {1, 3, 7, 1 << 20}) {
            String out = redact(body, chunk);
            assertEquals(body.length(), out.length());
            String decoded = out.replaceAll("=\r?\n", "");
            assertFalse(decoded.contains("A1b2C3d4"), chunk + ": " + out);
            assertFalse(decoded.contains("E5f6G7h8I9j0"), chunk + ": " + out);
            assertTrue(out.contains("[REDACTED"), out);
            assertTrue(out.endsWith("\r\n--B--\r\n"), out);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"a = b", "x=", "x=\r", "----=_Part_0", "Zm9vYmFy==\r\n", "k=zz"})
    void textThatIsNoEscapeIsReleasedAsItIs(String body) {
        assertEquals(body, redact(body, 1));
        assertEquals(body, redact(body, 1 << 20));
    }

    private static String redact(String body, int chunk) {
        byte[] in = body.getBytes(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyRedactor r = new BodyRedactor(Redactor.builtIn().compiled(), Mode.MULTIPART, "body", new Findings());
        for (int k = 0; k < in.length; k += chunk) {
            r.feed(in, k, Math.min(chunk, in.length - k), out::write);
        }
        r.finish(out::write);
        return out.toString(StandardCharsets.ISO_8859_1);
    }
}
