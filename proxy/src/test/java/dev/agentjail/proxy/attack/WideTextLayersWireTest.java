package dev.agentjail.proxy.attack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * UTF-16/32 text one layer down: a file in UTF-16LE with a BOM (what Windows PowerShell 5's {@code >} writes) uploaded
 * through GitHub's contents API is base64 in a UTF-8 JSON body, and GitHub stores and serves it as the text it is. The
 * decoded layer is read as that text; a secret in it cannot be written back through the layer, so the request is
 * refused (403 secret-not-rewritable) and nothing of it reaches the upstream. The UTF-8 control is redacted in place.
 * A UTF-16 multipart part sent raw (no layer) stays a documented gap.
 */
@ExtendWith(NettyLeakGuard.class)
class WideTextLayersWireTest {
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"json-base64", "json-base64-be", "json-hex", "json-base64-utf32", "json-base64-control-utf8"})
    void aWideFileOneLayerDownIsRefusedAndUtf8IsRedacted(String how) throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n");
        Charset cs = Charset.forName(
                how.endsWith("control-utf8")
                        ? "UTF-8"
                        : how.endsWith("-be") ? "UTF-16BE" : how.endsWith("utf32") ? "UTF-32LE" : "UTF-16LE");
        byte[] file = ("\uFEFFGITHUB_TOKEN=" + PAT + "\r\n").getBytes(cs);
        String type;
        byte[] body;
        if (how.equals("multipart")) {
            type = "multipart/form-data; boundary=XyZ";
            byte[] a = ("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.txt\"\r\n"
                            + "Content-Type: text/plain\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            byte[] z = "\r\n--XyZ--\r\n".getBytes(StandardCharsets.ISO_8859_1);
            body = new byte[a.length + file.length + z.length];
            System.arraycopy(a, 0, body, 0, a.length);
            System.arraycopy(file, 0, body, a.length, file.length);
            System.arraycopy(z, 0, body, a.length + file.length, z.length);
        } else {
            type = "application/json";
            String content = how.equals("json-hex")
                    ? HexFormat.of().formatHex(file)
                    : Base64.getEncoder().encodeToString(file);
            body = ("{\"message\":\"notes\",\"content\":\"" + content + "\"}").getBytes(StandardCharsets.UTF_8);
        }
        byte[] head = ("PUT http://" + up + "/repos/o/r/contents/notes.txt HTTP/1.1\r\nHost: " + up
                        + "\r\nContent-Type: " + type + "\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        try (RawClient c = RawClient.connect(proxy.address())) {
            byte[] all = Arrays.copyOf(head, head.length + body.length);
            System.arraycopy(body, 0, all, head.length, body.length);
            c.send(all);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            String got = upstream.requests().isEmpty()
                    ? ""
                    : upstream.requests().get(0).body();
            byte[] raw = got.getBytes(StandardCharsets.ISO_8859_1);
            byte[] stored = raw;
            if (how.startsWith("json-") && raw.length > 0) {
                String json = new String(raw, StandardCharsets.UTF_8);
                int at = json.indexOf("\"content\":\"") + 11;
                String content = json.substring(at, json.indexOf('"', at));
                stored = how.equals("json-hex")
                        ? HexFormat.of().parseHex(content)
                        : Base64.getDecoder().decode(content);
            }
            if (!how.endsWith("control-utf8")) {
                assertEquals(403, r.status(), how);
                assertTrue(r.body().contains("secret-not-rewritable"), r.body());
            } else {
                assertEquals(200, r.status(), how);
            }
            assertFalse(
                    new String(stored, cs).contains(PAT),
                    "status " + r.status() + ": the stored file, read as the " + cs + " text it is, holds the token ("
                            + how + ")");
        }
    }
}
