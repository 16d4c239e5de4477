package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A base64 or hex layer whose bytes are UTF-16 or UTF-32 text (a BOM, or RFC 4627's NUL pattern) is read as that
 * text: a secret there refuses the request (it cannot be written back), short or streamed, in every chunking; wide text
 * without one passes unchanged.
 */
class WideLayerTest {
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    @ParameterizedTest
    @CsvSource({
        "UTF-16LE,true,base64,0",
        "UTF-16LE,false,base64,0",
        "UTF-16BE,true,base64,0",
        "UTF-16BE,false,hex,0",
        "UTF-32LE,true,base64,0",
        "UTF-32BE,false,hex,0",
        "UTF-16LE,true,base64,400",
        "UTF-16LE,false,hex,400",
        "UTF-32LE,false,base64,400",
    })
    void aSecretInWideTextOneLayerDownRefuses(String charset, boolean bom, String how, int padding) {
        String text = (bom ? "\uFEFF" : "") + "x".repeat(padding) + "GITHUB_TOKEN=" + PAT + "\r\n";
        String run = encode(text.getBytes(Charset.forName(charset)), how);
        String body = "{\"message\":\"notes\",\"content\":\"" + run + "\"}";
        for (int chunk : new int[] {1, 5, 64, 1 << 20}) {
            Findings f = new Findings();
            redact(body, chunk, f);
            assertTrue(f.refusal().isPresent(), charset + " " + how + " chunk " + chunk + ": " + f.list());
            assertEquals(Findings.NOT_REWRITABLE, f.refusal().get().reason());
            assertTrue(
                    f.list().get(0).location().startsWith("body/" + how + "/utf-"),
                    f.list().toString());
        }
    }

    @ParameterizedTest
    @CsvSource({"UTF-16LE,base64", "UTF-16BE,hex", "UTF-32LE,base64"})
    void wideTextWithoutASecretPassesUnchanged(String charset, String how) {
        String text = "\uFEFFnothing to see here, " + "é".repeat(300) + " a word\r\n";
        String body = "{\"content\":\"" + encode(text.getBytes(Charset.forName(charset)), how) + "\"}";
        for (int chunk : new int[] {1, 7, 1 << 20}) {
            Findings f = new Findings();
            assertArrayEquals(body.getBytes(StandardCharsets.UTF_8), redact(body, chunk, f));
            assertTrue(f.isEmpty() && f.refusal().isEmpty(), f.list().toString());
        }
    }

    private static String encode(byte[] bytes, String how) {
        return how.equals("hex")
                ? HexFormat.of().formatHex(bytes)
                : Base64.getEncoder().encodeToString(bytes);
    }

    private static byte[] redact(String body, int chunk, Findings f) {
        byte[] in = body.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyRedactor r = new BodyRedactor(Redactor.builtIn().compiled(), Mode.JSON, "body", f);
        for (int k = 0; k < in.length; k += chunk) {
            r.feed(in, k, Math.min(chunk, in.length - k), out::write);
        }
        r.finish(out::write);
        return out.toByteArray();
    }
}
