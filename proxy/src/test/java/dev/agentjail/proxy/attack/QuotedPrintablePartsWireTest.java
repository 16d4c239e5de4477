package dev.agentjail.proxy.attack;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A multipart part (or a MIME message) with {@code Content-Transfer-Encoding: quoted-printable}, which every
 * MIME parser decodes (Python's email package, JavaMail, multer's busboy does not but mail APIs do): {@code =67} for g,
 * or a soft line break {@code =\r\n} inside the token: the token is redacted before it leaves.
 */
@ExtendWith(NettyLeakGuard.class)
class QuotedPrintablePartsWireTest {
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"=67hp_REST", "gh=\r\np_REST", "ghp_A1b2C3d4=\r\nE5f6G7h8I9j0K1l2M3n4O5p6Q7r8"})
    void aQuotedPrintablePartIsRedacted(String value) throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n");
        String part = value.replace("REST", PAT.substring(4));
        String body = "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n"
                + "Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                + "token=3D" + part + "\r\n--B--\r\n";
        try (RawClient c = RawClient.connect(proxy.address())) {
            c.send("POST http://" + up + "/upload HTTP/1.1\r\nHost: " + up
                    + "\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: " + body.length()
                    + "\r\n\r\n" + body);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            String got = upstream.requests().isEmpty()
                    ? ""
                    : upstream.requests().get(0).body();
            // Quoted-printable decoding of what arrived: soft breaks dropped, =XX decoded.
            String decoded = java.util.regex.Pattern.compile("=([0-9A-Fa-f]{2})")
                    .matcher(got.replace("=\r\n", ""))
                    .replaceAll(m -> String.valueOf((char) Integer.parseInt(m.group(1), 16)));
            assertFalse(decoded.contains(PAT), "status " + r.status() + "; a MIME parser reads " + decoded);
        }
    }
}
