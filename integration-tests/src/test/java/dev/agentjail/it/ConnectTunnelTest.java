package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentjail.it.support.AuditRecords;
import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Curl;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.RawHttp;
import dev.agentjail.it.support.TestData;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HTTPS through CONNECT as a raw tunnel: the client does TLS end to end with the upstream and trusts only the
 * upstream's own test certificate (curl {@code --cacert}, a JDK SSLContext with that single anchor); the proxy records
 * the CONNECT with {@code tls: tunnel} before its 200 and, in a {@code tunnel-close} record, the bytes the tunnel
 * carried; a denied CONNECT gets a 403, never a 200.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectTunnelTest {
    static TestTls tls;
    static WireMockServer upstream;

    private ProxyFixture proxy;

    @BeforeAll
    static void startUpstream() throws Exception {
        tls = TestTls.shared();
        upstream = new WireMockServer(wireMockConfig()
                .dynamicPort()
                .dynamicHttpsPort()
                .keystoreType("PKCS12")
                .keystorePath(tls.keystore().toString())
                .keystorePassword(TestTls.PASSWORD)
                .keyManagerPassword(TestTls.PASSWORD));
        upstream.start();
    }

    @AfterAll
    static void stopUpstream() {
        upstream.stop();
    }

    @BeforeEach
    void startProxy() throws Exception {
        upstream.resetAll();
        upstream.stubFor(any(anyUrl())
                .willReturn(aResponse()
                        .withStatus(200)
                        .withHeader("X-Upstream", "tls")
                        .withBody("secret payload")));
        proxy = ProxyFixture.start(Policies.upstreamOn(upstream.httpsPort()));
    }

    @AfterEach
    void stopProxy() {
        proxy.close();
    }

    @Test
    void curlTunnelsTlsToTheUpstreamTrustingOnlyItsCertificate() {
        int port = upstream.httpsPort();
        Command.Result r = Curl.viaProxy(
                proxy.port(),
                "-i",
                "--cacert",
                tls.certificatePem().toString(),
                "https://upstream.test:" + port + "/secure/path?k=v");

        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.out().toLowerCase(Locale.ROOT).contains("x-upstream: tls"), r.out());
        assertTrue(r.out().endsWith("secret payload"), r.out());
        LoggedRequest got = onlyUpstreamRequest();
        assertEquals("/secure/path?k=v", got.getUrl());

        Tunnel t = awaitTunnelRecords();
        assertEquals(AuditRecord.ALLOW, t.request().decision());
        assertEquals("CONNECT", t.request().method());
        assertEquals("https", t.request().scheme());
        assertEquals("upstream.test", t.request().host());
        assertEquals(port, t.request().port());
        assertEquals(200, t.request().status());
        assertEquals(AuditRecord.TLS_TUNNEL, t.request().tls());
        assertEquals("127.0.0.1", t.request().resolvedIp());
        assertNull(t.request().path(), "the proxy cannot see inside the tunnel");
        AuditRecord close = t.close();
        assertTrue(close.bytesOut() > 0 && close.bytesIn() > "secret payload".length(), close::toString);
    }

    @Test
    void jdkClientTunnelsGetAndPostTrustingOnlyTheTestCertificate() throws Exception {
        int port = upstream.httpsPort();
        byte[] body = TestData.randomBytes(200_000, 7);
        try (HttpClient client = JdkClients.viaProxy(proxy.port(), tls.clientContext())) {
            HttpResponse<String> get = client.send(
                    HttpRequest.newBuilder(URI.create("https://upstream.test:" + port + "/a"))
                            .timeout(Duration.ofSeconds(30))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> post = client.send(
                    HttpRequest.newBuilder(URI.create("https://upstream.test:" + port + "/b"))
                            .timeout(Duration.ofSeconds(30))
                            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, get.statusCode());
            assertEquals("secret payload", get.body());
            assertEquals(200, post.statusCode());
            assertEquals("secret payload", post.body());
        }
        List<LoggedRequest> got = upstream.getAllServeEvents().reversed().stream()
                .map(e -> e.getRequest())
                .toList();
        assertEquals(2, got.size());
        assertEquals("upstream.test:" + port, got.get(0).getHeader("Host"));
        assertArrayEquals(body, got.get(1).getBody());

        // The client kept both requests on one tunnel: one CONNECT, one request record written before its 200, and
        // one tunnel-close record with the byte counts written when the tunnel closed.
        AuditRecord rec = awaitTunnelRecords().close();
        assertEquals(AuditRecord.TLS_TUNNEL, rec.tls());
        assertEquals("CONNECT", rec.method());
        assertTrue(rec.bytesOut() > body.length, () -> "bytes_out counts the TLS bytes sent upstream: " + rec);
        assertTrue(rec.bytesIn() > 0, rec::toString);
    }

    @Test
    void curlDeniedConnectGets403AndNoTunnel() {
        Command.Result r = Curl.viaProxy(
                proxy.port(), "--cacert", tls.certificatePem().toString(), "https://" + Policies.DENIED + "/x");

        assertNotEquals(0, r.exitCode(), r::describe);
        assertTrue(r.stderr().contains("403"), r::describe);
        assertDeniedConnect(443);
    }

    @Test
    void jdkClientDeniedConnectFailsWith403() throws Exception {
        try (HttpClient client = JdkClients.viaProxy(proxy.port(), tls.clientContext())) {
            IOException e = assertThrows(
                    IOException.class,
                    () -> client.send(
                            HttpRequest.newBuilder(URI.create("https://" + Policies.DENIED + ":8443/x"))
                                    .timeout(Duration.ofSeconds(30))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString()));
            assertTrue(String.valueOf(e.getMessage()).contains("403"), () -> "message: " + e.getMessage());
        }
        assertDeniedConnect(8443);
    }

    @Test
    void deniedConnectAnswersWithReasonHeaderOneLineBodyAndClose() throws IOException {
        String head;
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("CONNECT " + Policies.DENIED + ":443 HTTP/1.1\r\nHost: " + Policies.DENIED + ":443\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            head = RawHttp.readToEnd(s.getInputStream());
        }
        assertTrue(head.startsWith("HTTP/1.1 403 "), head);
        String lower = head.toLowerCase(Locale.ROOT);
        assertTrue(lower.contains("\r\nx-agentjail-reason: not-in-allowlist\r\n"), head);
        assertTrue(lower.contains("\r\nconnection: close\r\n"), head);
        String body = head.substring(head.indexOf("\r\n\r\n") + 4);
        assertEquals(1, body.lines().count(), body);
        assertDeniedConnect(443);
    }

    private void assertDeniedConnect(int port) {
        AuditRecord rec = awaitOneRecord();
        assertEquals(AuditRecord.DENY, rec.decision());
        assertEquals("not-in-allowlist", rec.reason());
        assertEquals("CONNECT", rec.method());
        assertEquals(Policies.DENIED, rec.host());
        assertEquals(port, rec.port());
        assertEquals(403, rec.status());
        assertEquals(AuditRecord.TLS_NONE, rec.tls(), "no tunnel was opened");
        assertEquals(0, upstream.getAllServeEvents().size());
    }

    /** The records of one allowed CONNECT: its request record, then its tunnel-close record. */
    private record Tunnel(AuditRecord request, AuditRecord close) {}

    /**
     * An allowed CONNECT's request record is written before the client sees the 200, with no byte counts yet; its
     * tunnel-close record, written when the tunnel closes (just after the client has gone), repeats the request's
     * fields and adds the bytes carried and the tunnel's duration.
     */
    private Tunnel awaitTunnelRecords() {
        Await.until(
                Duration.ofSeconds(10),
                () -> !AuditRecords.tunnelCloses(proxy.records()).isEmpty(),
                () -> "no tunnel-close record: " + proxy.records());
        List<AuditRecord> records = proxy.records();
        assertEquals(2, records.size(), () -> "a request record and a tunnel-close record per CONNECT: " + records);
        AuditRecord request = records.get(0);
        AuditRecord close = records.get(1);
        assertEquals(AuditRecord.KIND_REQUEST, request.kind(), () -> "the request record comes first: " + records);
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, close.kind(), records::toString);
        assertEquals(AuditRecord.ALLOW, request.decision());
        assertEquals(200, request.status());
        assertEquals(AuditRecord.TLS_TUNNEL, request.tls());
        assertEquals(0, request.bytesOut(), () -> "nothing has crossed the tunnel before the 200: " + request);
        assertEquals(0, request.bytesIn(), request::toString);
        assertEquals(
                AuditRecords.requestFields(request),
                AuditRecords.requestFields(close),
                "tunnel-close repeats the request's fields");
        assertTrue(close.durationMs() >= request.durationMs(), close::toString);
        return new Tunnel(request, close);
    }

    /** A refused CONNECT leaves one request record, written before the 403, and no tunnel-close record. */
    private AuditRecord awaitOneRecord() {
        Await.until(Duration.ofSeconds(10), () -> !proxy.records().isEmpty(), () -> "no audit record");
        List<AuditRecord> records = proxy.records();
        assertEquals(1, records.size(), () -> "one record per refused CONNECT: " + records);
        assertEquals(AuditRecord.KIND_REQUEST, records.get(0).kind(), records::toString);
        return records.get(0);
    }

    private static LoggedRequest onlyUpstreamRequest() {
        var all = upstream.getAllServeEvents();
        assertEquals(1, all.size(), () -> "requests seen by the upstream: " + all);
        return all.get(0).getRequest();
    }
}
