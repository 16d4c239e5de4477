package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.AuditRecords;
import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.LineQueue;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.it.support.SseUpstream;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Server-sent events stream through the proxy: the first event reaches the client while the upstream is still holding
 * the stream open, over plain HTTP and through a CONNECT tunnel, with the JDK HttpClient and with {@code curl -N}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SseStreamingTest {
    private static final Duration EVENT_WAIT = Duration.ofSeconds(10);

    static TestTls tls;

    @BeforeAll
    static void makeCertificate() throws Exception {
        tls = TestTls.shared();
    }

    @Test
    void jdkClientGetsTheFirstEventBeforeThePlainHttpStreamEnds() throws Exception {
        try (SseUpstream sse = SseUpstream.plain();
                ProxyFixture proxy = ProxyFixture.start(Policies.upstreamOn(sse.port()));
                HttpClient client = JdkClients.viaProxy(proxy.port())) {
            HttpResponse<InputStream> response =
                    client.send(events("http", sse.port()), HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, response.statusCode());
            assertEquals(
                    "text/event-stream",
                    response.headers().firstValue("Content-Type").orElse(null));
            try (InputStream body = response.body()) {
                assertIncremental(sse, LineQueue.of(body));
            }
            Await.until(
                    Duration.ofSeconds(10),
                    () -> AuditRecords.requests(proxy.records()).size() == 1,
                    () -> "records: " + proxy.records());
            AuditRecord rec = AuditRecords.requests(proxy.records()).get(0);
            assertEquals(AuditRecord.ALLOW, rec.decision());
            assertEquals("/events", rec.path());
            assertEquals(200, rec.status());
            assertEquals(
                    (SseUpstream.FIRST + SseUpstream.SECOND).getBytes(StandardCharsets.UTF_8).length, rec.bytesIn());
        }
    }

    @Test
    void jdkClientGetsTheFirstEventBeforeTheStreamEndsThroughConnect() throws Exception {
        try (SseUpstream sse = SseUpstream.https(tls.serverContext());
                ProxyFixture proxy = ProxyFixture.start(Policies.upstreamOn(sse.port()));
                HttpClient client = JdkClients.viaProxy(proxy.port(), tls.clientContext())) {
            HttpResponse<InputStream> response =
                    client.send(events("https", sse.port()), HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, response.statusCode());
            try (InputStream body = response.body()) {
                assertIncremental(sse, LineQueue.of(body));
            }
        }
    }

    @Test
    void curlGetsTheFirstEventBeforeThePlainHttpStreamEnds() throws Exception {
        try (SseUpstream sse = SseUpstream.plain();
                ProxyFixture proxy = ProxyFixture.start(Policies.upstreamOn(sse.port()))) {
            runCurl(sse, proxy, "http://upstream.test:" + sse.port() + "/events");
        }
    }

    @Test
    void curlGetsTheFirstEventBeforeTheStreamEndsThroughConnect() throws Exception {
        try (SseUpstream sse = SseUpstream.https(tls.serverContext());
                ProxyFixture proxy = ProxyFixture.start(Policies.upstreamOn(sse.port()))) {
            runCurl(
                    sse,
                    proxy,
                    "--cacert",
                    tls.certificatePem().toString(),
                    "https://upstream.test:" + sse.port() + "/events");
        }
    }

    private static void runCurl(SseUpstream sse, ProxyFixture proxy, String... target) throws Exception {
        List<String> argv = new java.util.ArrayList<>(List.of(
                Prerequisites.require(Prerequisites.CURL).toString(),
                "-q",
                "-sS",
                "-N",
                "--max-time",
                "40",
                "-x",
                "http://127.0.0.1:" + proxy.port()));
        argv.addAll(List.of(target));
        Process curl = Command.builder(argv, Map.of()).start();
        try {
            curl.getOutputStream().close();
            assertIncremental(sse, LineQueue.of(curl.getInputStream()));
            assertTrue(curl.waitFor(20, TimeUnit.SECONDS), "curl did not exit after the stream ended");
            assertEquals(0, curl.exitValue(), () -> new String(readAll(curl), StandardCharsets.UTF_8));
        } finally {
            curl.destroyForcibly();
        }
    }

    /** First event while the upstream still holds the stream, then the second event and the end. */
    private static void assertIncremental(SseUpstream sse, LineQueue lines) throws InterruptedException {
        assertEquals("id: 1", lines.next(EVENT_WAIT));
        assertEquals("event: tick", lines.next(EVENT_WAIT));
        assertEquals("data: first", lines.next(EVENT_WAIT));
        assertEquals("", lines.next(EVENT_WAIT));
        assertFalse(sse.finished(), "the first event arrived before the upstream ended the stream");
        sse.release();
        assertEquals("id: 2", lines.next(EVENT_WAIT));
        assertEquals("event: tick", lines.next(EVENT_WAIT));
        assertEquals("data: second", lines.next(EVENT_WAIT));
        assertEquals("", lines.next(EVENT_WAIT));
        assertNull(lines.next(EVENT_WAIT), "the stream ends after the second event");
    }

    private static HttpRequest events(String scheme, int port) {
        return HttpRequest.newBuilder(URI.create(scheme + "://upstream.test:" + port + "/events"))
                .header("Accept", "text/event-stream")
                .timeout(Duration.ofSeconds(30))
                .build();
    }

    private static byte[] readAll(Process p) {
        try (InputStream err = p.getErrorStream()) {
            return err.readAllBytes();
        } catch (java.io.IOException e) {
            return new byte[0];
        }
    }
}
