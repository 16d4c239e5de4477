package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.StubResolver;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A host name can carry a secret out (a DNS query, the SNI, the Host header all send it): a request whose name holds one
 * is refused before anything is resolved or dialled, also where the policy would allow the name, and its record shows
 * the name redacted (issue 17, point 9).
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyHostSecretTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Synthetic, in the AWS access key id format; never a real key. */
    private static final String KEY_ID = "AKIA" + "QWERTYUIOPASDFGH";

    private final StubResolver dns = new StubResolver();
    private final MemoryAuditSink audit = new MemoryAuditSink();
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "CONNECT %s.allowed.test:443 HTTP/1.1\r\nHost: %s.allowed.test:443\r\n\r\n",
                "GET http://%s.allowed.test/ HTTP/1.1\r\nHost: %s.allowed.test\r\n\r\n",
                "CONNECT %s.denied.test:443 HTTP/1.1\r\nHost: %s.denied.test:443\r\n\r\n",
                "GET http://x.%s.allowed.test:8080/ HTTP/1.1\r\nHost: x.%s.allowed.test:8080\r\n\r\n",
            })
    void aNameCarryingASecretIsRefusedUnresolvedAndRecordedRedacted(String request) throws Exception {
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"*.allowed.test\", \"*.allowed.test:8080\"]\n",
                audit,
                dns,
                dev.agentjail.proxy.Timeouts.defaults());
        try (RawClient c = RawClient.connect(proxy.address())) {
            c.send(request.formatted(KEY_ID, KEY_ID));
            RawResponse response = c.readResponse(WAIT);

            assertEquals(403, response.status());
            assertEquals(ProxyReasons.SECRET_IN_HOST, response.header(ProxyReasons.HEADER));
        }
        assertEquals(List.of(), dns.queries(), "the name was resolved");
        AuditRecord record = proxy.records().getFirst();
        assertEquals(AuditRecord.DENY, record.decision());
        assertEquals(ProxyReasons.SECRET_IN_HOST, record.reason());
        String lower = KEY_ID.toLowerCase(Locale.ROOT);
        assertFalse(record.toString().toLowerCase(Locale.ROOT).contains(lower.substring(4)), record.toString());
        assertTrue(record.host().endsWith(".test"), record.host());
    }
}
