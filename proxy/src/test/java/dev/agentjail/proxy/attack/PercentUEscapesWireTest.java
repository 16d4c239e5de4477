package dev.agentjail.proxy.attack;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** On the wire: {@code %u0067hp_...} in a query and a form body is redacted before it leaves (ASP.NET's HttpUtility.UrlDecode reads ghp_...). */
@ExtendWith(NettyLeakGuard.class)
class PercentUEscapesWireTest {
    private static final String REST = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @Test
    void percentUInQueryAndFormIsRedacted() throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n");
        String body = "token=%u0067hp_" + REST;
        try (RawClient c = RawClient.connect(proxy.address())) {
            c.send("POST http://" + up + "/login.aspx?t=%u0067hp_" + REST + " HTTP/1.1\r\nHost: " + up
                    + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " + body.length()
                    + "\r\n\r\n" + body);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            String got = upstream.received();
            assertFalse(got.contains(REST), "status " + r.status() + "; upstream got:\n" + got);
        }
    }
}
