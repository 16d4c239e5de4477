package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attack: a secret in a JSON body in UTF-16 / UTF-32 with no declared charset. Python's json.loads(bytes) and
 * Jackson detect the encoding from the BOM or the zero bytes and read the token; the redactor scans the bytes only
 * (docs/redaction.md calls UTF-16 text "scanned as bytes only"), so the token reaches the upstream. Issue 17's rule:
 * "Scan as every receiver could read". The MCP detector already reads these bodies in these encodings; redaction
 * does not.
 */
@ExtendWith(NettyLeakGuard.class)
class AttackRedactionCharsetTest {
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-16LE+BOM"})
    void secretInAnUndeclaredUtf16JsonBodyIsRedacted(String encoding) throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n");
        boolean bom = encoding.endsWith("+BOM");
        Charset cs = Charset.forName(encoding.replace("+BOM", ""));
        byte[] body = ((bom ? "\uFEFF" : "") + "{\"token\":\"" + PAT + "\"}").getBytes(cs);
        byte[] head = ("POST http://" + up + "/v1 HTTP/1.1\r\nHost: " + up
                        + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        try (RawClient c = RawClient.connect(proxy.address())) {
            byte[] all = Arrays.copyOf(head, head.length + body.length);
            System.arraycopy(body, 0, all, head.length, body.length);
            c.send(all);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            if (r.status() != 200) {
                return; // refused: nothing to look at
            }
        }
        String got = upstream.requests().getFirst().body();
        String decoded = new String(got.getBytes(StandardCharsets.ISO_8859_1), cs);
        assertFalse(decoded.contains(PAT), encoding + ": the upstream's JSON parser reads the token: " + decoded);
    }
}
