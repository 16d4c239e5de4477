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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An XML document in EBCDIC, which an XML parser detects from {@code 4C 6F A7 94} ({@code <?xm}, XML 1.0 Appendix F)
 * and its encoding declaration, with no NUL and no declared charset: the byte scan cannot read it, so it is refused
 * (403 uninspectable-body) as a declared non-UTF-8 charset is, and nothing reaches the upstream.
 */
@ExtendWith(NettyLeakGuard.class)
class EbcdicXmlWireTest {
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"IBM037", "IBM1047", "IBM500"})
    void anEbcdicXmlBodyIsRefused(String charset) throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n");
        byte[] b = ("<?xml version=\"1.0\" encoding=\"" + charset + "\"?><a>" + PAT + "</a>")
                .getBytes(Charset.forName(charset));
        byte[] head = ("PUT http://" + up + "/doc HTTP/1.1\r\nHost: " + up
                        + "\r\nContent-Type: application/xml\r\nContent-Length: " + b.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        try (RawClient c = RawClient.connect(proxy.address())) {
            byte[] all = java.util.Arrays.copyOf(head, head.length + b.length);
            System.arraycopy(b, 0, all, head.length, b.length);
            c.send(all);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            assertEquals(403, r.status(), r.body());
            assertTrue(r.body().contains("uninspectable-body"), r.body());
            assertFalse(
                    upstream.requests().stream().anyMatch(q -> q.body().length() > 0),
                    "the upstream got a body: " + upstream.requests());
        }
    }
}
