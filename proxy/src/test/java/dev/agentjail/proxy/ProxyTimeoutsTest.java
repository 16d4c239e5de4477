package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.CorpusProxy.WAIT;
import static dev.agentjail.proxy.testing.CorpusProxy.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.CorpusProxy;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Corpus cases 103–105 through a real proxy with short clocks (1 s for a head and a stalled body, 2 s idle):
 * slow or absent input ends in a 408 with its reason and one audit record, and nothing incomplete is completed upstream.
 */
class ProxyTimeoutsTest {
    private static final Duration SECOND = Duration.ofSeconds(1);
    private static final Duration IDLE = Duration.ofSeconds(2);

    private CorpusProxy env;

    @BeforeEach
    void start() throws Exception {
        // Idle is longer than the head and body bounds: an idle close races a slow head (reported, not pinned).
        env = CorpusProxy.start(RecordingUpstream.start(), CorpusProxy.timeouts(SECOND, SECOND, IDLE));
    }

    @AfterEach
    void stop() throws Exception {
        env.close();
    }

    @Test
    void case103ASlowlorisHeadIsCutOffByTheHeaderTimeout() throws Exception {
        long started = System.nanoTime();
        try (RawClient client = env.client()) {
            client.send("GET http://" + env.up() + "/ HTTP/1.1\r\n");
            // One byte every 200 ms: the connection is never idle, but the head never completes in time.
            String header = "X-Slow: " + "s".repeat(40) + "\r\n";
            try {
                for (int i = 0; i < header.length() && !client.closedByPeer(); i++) {
                    client.send(header.substring(i, i + 1));
                    client.readUntilClose(Duration.ofMillis(200));
                }
            } catch (IOException e) {
                // The proxy closed the connection between two bytes; its answer was read before.
            }
            RawResponse response =
                    RawResponse.parseAll(client.readUntilClose(WAIT), true).getFirst();

            assertEquals(408, response.status());
            assertEquals("header-timeout", response.header(ProxyReasons.HEADER));
            assertTrue(client.closedByPeer());
        }
        assertTrue(
                Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(4)) < 0,
                "cut off in seconds");
        env.upstream.assertUntouched();
        AuditRecord record = env.onlyRecord();
        assertEquals("error", record.decision());
        assertEquals("header-timeout", record.reason());
        assertEquals(408, record.status());
    }

    @Test
    void case104ADeclaredBodyThatNeverComesIsCutOffAndNeverCompletedUpstream() throws Exception {
        assertBodyTimeout("Content-Length: 999999999\r\n\r\n");
    }

    @Test
    void case104AShortBodyIsCutOffAndNeverCompletedUpstream() throws Exception {
        assertBodyTimeout("Content-Length: 10\r\n\r\nhello");
    }

    @Test
    void case104AStalledChunkedBodyIsCutOff() throws Exception {
        assertBodyTimeout("Transfer-Encoding: chunked\r\n\r\n5\r\nhel");
    }

    private void assertBodyTimeout(String rest) throws Exception {
        try (RawClient client = env.client()) {
            client.send("POST http://" + env.up() + "/upload HTTP/1.1\r\nHost: " + env.up() + "\r\n" + rest);
            RawResponse response =
                    RawResponse.parseAll(client.readUntilClose(WAIT), true).getFirst();

            assertEquals(408, response.status());
            assertEquals("body-timeout", response.header(ProxyReasons.HEADER));
            assertTrue(client.closedByPeer());
        }
        // The head streams upstream as soon as it is allowed; the request it starts is never completed there.
        assertTrue(RecordingUpstream.await(() -> env.upstream.closedConnections() == env.upstream.connections(), WAIT));
        assertEquals(List.of(), env.upstream.requests());
        AuditRecord record = env.onlyRecord();
        assertEquals("error", record.decision());
        assertEquals("body-timeout", record.reason());
        assertEquals("upstream.test", record.host());
    }

    @Test
    void case105BytesThatNeverFormALineEndInAHeaderTimeout() throws Exception {
        try (RawClient client = env.client()) {
            // A TLS ClientHello sent to the plain-HTTP port has no line ending for a long time.
            client.send("\u0016\u0003\u0001\u0000\u00c8\u0001\u0000\u0000\u00c4\u0003\u0003");
            RawResponse response =
                    RawResponse.parseAll(client.readUntilClose(WAIT), true).getFirst();

            assertEquals(408, response.status());
            assertTrue(client.closedByPeer());
        }
        AuditRecord record = env.onlyRecord();
        assertEquals("header-timeout", record.reason());
    }

    @Test
    void case105AConnectionThatSendsNothingIsClosedWhenIdleAndIsNoRequest() throws Exception {
        try (RawClient client = env.client()) {
            assertTrue(client.awaitClose(WAIT), "idle connection closed");
            assertEquals("", client.received());
        }
        Thread.sleep(100);
        assertEquals(List.of(), env.records());
    }

    @Test
    void aKeptAliveConnectionIsClosedWhenIdleAfterItsRequest() throws Exception {
        try (RawClient client = env.client()) {
            client.send(get(env.up(), "/"));
            assertEquals(200, client.readResponse(WAIT).status());
            assertTrue(client.awaitClose(WAIT), "idle connection closed");
        }
        assertEquals(1, env.awaitRecords(1).size());
    }

    @Test
    void aStalledSecondHeadIsCutOffAfterTheFirstWasAnswered() throws Exception {
        try (RawClient client = env.client()) {
            client.send(get(env.up(), "/first") + "GET http://" + env.up() + "/second HTTP/1.1\r\nHost: ");
            List<RawResponse> responses = RawResponse.parseAll(client.readUntilClose(WAIT), true);

            assertEquals(
                    List.of(200, 408),
                    responses.stream().map(RawResponse::status).toList());
        }
        List<AuditRecord> records = env.awaitRecords(2);
        assertEquals(
                List.of("allow", "error"),
                records.stream().map(AuditRecord::decision).toList());
        assertNotNull(records.get(1).reason());
        assertEquals("header-timeout", records.get(1).reason());
    }
}
