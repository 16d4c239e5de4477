package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A secret in a JSON body in UTF-16 or UTF-32 with no declared charset: Python's json.loads(bytes) and Jackson detect
 * the encoding from the BOM or the zero bytes and would read the token, which the byte scan cannot see. Such a body is
 * refused, 403 uninspectable-body, and nothing of it reaches the upstream.
 */
@ExtendWith(NettyLeakGuard.class)
class WideTextBodyTest {
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
    void anUndeclaredUtf16Or32BodyIsRefused(String encoding) throws Exception {
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
            assertEquals(403, r.status(), encoding);
            assertEquals(ProxyReasons.UNINSPECTABLE_BODY, r.header(ProxyReasons.HEADER));
            assertTrue(r.body().contains("send it as UTF-8"), r.body());
        }
        assertEquals(0, upstream.requests().size(), "nothing of it reached the upstream");
    }
}
