package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Corpus case 136: while the audit log cannot be written, nothing is served; once it can, service resumes. */
class AuditFailClosedTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    @Test
    void requestsAreRefusedWhileTheLogFailsAndServedAgainOnceItRecovers() throws Exception {
        MemoryAuditSink sink = new MemoryAuditSink();
        try (RecordingUpstream upstream = RecordingUpstream.start();
                ProxyFixture proxy = ProxyFixture.start(policy(upstream.port()), sink, null, Timeouts.defaults())) {
            String get = "GET http://upstream.test:" + upstream.port() + "/x HTTP/1.1\r\nHost: upstream.test:"
                    + upstream.port() + "\r\n\r\n";
            String connect = "CONNECT upstream.test:" + upstream.port() + " HTTP/1.1\r\nHost: upstream.test:"
                    + upstream.port() + "\r\n\r\n";
            sink.failing(true);

            RawResponse refused = exchange(proxy, get);
            assertEquals(503, refused.status());
            assertEquals("audit-unavailable", refused.header(ProxyReasons.HEADER));
            RawResponse refusedTunnel = exchange(proxy, connect);
            assertEquals(503, refusedTunnel.status());
            upstream.assertUntouched();

            sink.failing(false);
            RawResponse served = exchange(proxy, get);
            assertEquals(200, served.status());
            assertEquals(1, upstream.requests().size());
            assertEquals(1, sink.records().size(), "only the served request could be recorded");
            assertTrue(sink.records().getFirst().decision().equals("allow"));
        }
    }

    private static RawResponse exchange(ProxyFixture proxy, String request) throws Exception {
        try (RawClient client = RawClient.connect(proxy.address())) {
            client.send(request);
            return client.readResponse(WAIT);
        }
    }

    private static String policy(int port) {
        return "version: 1\nnetwork:\n  allow: [\"upstream.test:" + port
                + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n";
    }
}
