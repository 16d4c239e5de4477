package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code network.mode: report}: what no allow entry covers goes through and is recorded as {@code would-deny} with
 * the reason it would have been refused; a deny entry still refuses.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyReportModeTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void unlistedHostsPassAndAreRecordedAsWouldDenyWhileDenyEntriesStillRefuse() throws Exception {
        try (RecordingUpstream upstream = RecordingUpstream.start();
                ProxyFixture proxy = ProxyFixture.start("""
                        version: 1
                        network:
                          mode: report
                          allow: [listed.test:%d]
                          deny: [evil.test]
                          resolve: {unlisted.test: 127.0.0.1, listed.test: 127.0.0.1, evil.test: 127.0.0.1}
                        """.formatted(upstream.port()))) {
            RawResponse unlisted = get(proxy, "unlisted.test:" + upstream.port());
            assertEquals(200, unlisted.status());
            RawResponse listed = get(proxy, "listed.test:" + upstream.port());
            assertEquals(200, listed.status());
            RawResponse evil = get(proxy, "evil.test:" + upstream.port());
            assertEquals(403, evil.status());
            assertEquals(Reasons.DENIED_BY_RULE, evil.header(ProxyReasons.HEADER));
            assertEquals(2, upstream.requests().size(), "only the two allowed requests reached the upstream");

            List<AuditRecord> records = proxy.records();
            assertEquals(3, records.size());
            assertEquals(AuditRecord.ALLOW, records.get(0).decision());
            assertEquals(Reasons.WOULD_DENY, records.get(0).reason());
            assertEquals(Reasons.NOT_ALLOWED, records.get(0).rule());
            assertEquals(Reasons.ALLOWED, records.get(1).reason());
            assertEquals(AuditRecord.DENY, records.get(2).decision());
        }
    }

    private static RawResponse get(ProxyFixture proxy, String authority) throws Exception {
        try (RawClient client = RawClient.connect(proxy.address())) {
            client.send(
                    "GET http://" + authority + "/x HTTP/1.1\r\nHost: " + authority + "\r\nConnection: close\r\n\r\n");
            return client.readResponse(WAIT);
        }
    }
}
