package dev.agentjail.proxy.attack;

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
import org.junit.jupiter.params.provider.CsvSource;

/**
 * From an attack session: Python's json.detect_encoding and Jackson decide UTF-16 on the first two bytes alone
 * ("00 XX" UTF-16BE, "XX 00" UTF-16LE), so a top-level JSON string starting with a non-ASCII character is wide without
 * RFC 4627's full NUL pattern. WideText follows the two-byte rule: such bodies, plain or compressed, are refused and
 * the token never reaches the upstream. (A wide body under a binary type is exempt: docs/redaction.md.)
 */
@ExtendWith(NettyLeakGuard.class)
class AttackWideLeadTest {
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                // UTF-16BE: 00 22 4E 2D -- b[2] != 0, WideText's "z0 && !z1 && z2 && !z3" misses it
                "UTF-16BE|application/json|\"\u4E2D token=TOKEN\"",
                // UTF-16LE: 22 00 2D 4E -- b[3] != 0
                "UTF-16LE|application/json|\"\u4E2D token=TOKEN\"",
                // UTF-16LE: 22 00 00 41 -- second char U+4100: b[2] == 0, b[3] != 0
                "UTF-16LE|application/json|\"\u4100 token=TOKEN\"",
                // UTF-16BE: a string starting with an emoji (surrogate pair D8 3D)
                "UTF-16BE|application/json|\"\uD83D\uDE00 token=TOKEN\"",
                // the compressed path (OutboundRequest.collect) asks the same WideText of the decoded text
                "UTF-16BE|application/json+gzip|\"\u4E2D token=TOKEN\"",
            })
    void aWideBodyIsKnownByEitherOfItsFirstTwoBytes(String encoding, String type, String text) throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n");
        Charset cs = Charset.forName(encoding);
        boolean gzip = type.endsWith("+gzip");
        type = type.replace("+gzip", "");
        byte[] body = text.replace("TOKEN", PAT).getBytes(cs);
        if (gzip) {
            java.io.ByteArrayOutputStream z = new java.io.ByteArrayOutputStream();
            try (java.util.zip.GZIPOutputStream g = new java.util.zip.GZIPOutputStream(z)) {
                g.write(body);
            }
            body = z.toByteArray();
        }
        byte[] head = ("POST http://" + up + "/v1 HTTP/1.1\r\nHost: " + up + "\r\nContent-Type: " + type
                        + (gzip ? "\r\nContent-Encoding: gzip" : "")
                        + "\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        try (RawClient c = RawClient.connect(proxy.address())) {
            byte[] all = Arrays.copyOf(head, head.length + body.length);
            System.arraycopy(body, 0, all, head.length, body.length);
            c.send(all);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            String got = upstream.requests().isEmpty()
                    ? ""
                    : upstream.requests().get(0).body();
            // The recorded body is ISO-8859-1 of the bytes: decode it as the receiver would.
            byte[] raw = got.getBytes(StandardCharsets.ISO_8859_1);
            if (gzip && raw.length > 0) {
                raw = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(raw)).readAllBytes();
            }
            String asReceiver = new String(raw, cs);
            assertFalse(
                    asReceiver.contains(PAT),
                    "status " + r.status() + ": the upstream's JSON parser reads the token in " + encoding + " "
                            + type);
        }
    }
}
