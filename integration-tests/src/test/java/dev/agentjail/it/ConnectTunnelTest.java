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
 * the tunnel with {@code tls: tunnel} and the bytes it carried; a denied CONNECT gets a 403, never a 200.
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

        AuditRecord rec = awaitOneRecord();
        assertEquals(AuditRecord.ALLOW, rec.decision());
        assertEquals("CONNECT", rec.method());
        assertEquals("https", rec.scheme());
        assertEquals("upstream.test", rec.host());
        assertEquals(port, rec.port());
        assertEquals(200, rec.status());
        assertEquals(AuditRecord.TLS_TUNNEL, rec.tls());
        assertEquals("127.0.0.1", rec.resolvedIp());
        assertNull(rec.path(), "the proxy cannot see inside the tunnel");
        assertTrue(rec.bytesOut() > 0 && rec.bytesIn() > "secret payload".length(), rec::toString);
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

        // The client kept both requests on one tunnel: one CONNECT, one record, written when the tunnel closed.
        AuditRecord rec = awaitOneRecord();
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

    /** A tunnel's record is written when the tunnel closes, just after the client has gone. */
    private AuditRecord awaitOneRecord() {
        Await.until(Duration.ofSeconds(10), () -> !proxy.records().isEmpty(), () -> "no audit record");
        List<AuditRecord> records = proxy.records();
        assertEquals(1, records.size(), () -> "one record per CONNECT: " + records);
        return records.get(0);
    }

    private static LoggedRequest onlyUpstreamRequest() {
        var all = upstream.getAllServeEvents();
        assertEquals(1, all.size(), () -> "requests seen by the upstream: " + all);
        return all.get(0).getRequest();
    }
}
