package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.github.tomakehurst.wiremock.http.HttpHeader;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentjail.it.support.AuditRecords;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Curl;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.RawHttp;
import dev.agentjail.it.support.TestData;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plain-HTTP forwarding with real clients (curl and the JDK HttpClient) to a WireMock upstream reached through the
 * policy's {@code resolve} map: the upstream receives exactly what was sent, in origin-form with the canonical Host
 * and without the client's proxy headers; the client receives the upstream's answer; a host outside the allow list
 * gets the proxy's 403 with its reason; pipelined requests on one connection are decided and answered one by one, in
 * order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpForwardingTest {
    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().dynamicPort())
            .build();

    @TempDir
    Path dir;

    private ProxyFixture proxy;
    private int port;

    @BeforeEach
    void startProxy() throws Exception {
        port = upstream.getPort();
        proxy = ProxyFixture.start(Policies.upstreamOn(port));
        upstream.stubFor(any(anyUrl())
                .willReturn(aResponse()
                        .withStatus(201)
                        .withHeader("X-Upstream", "wiremock")
                        .withBody("stored by upstream")));
    }

    @AfterEach
    void stopProxy() {
        proxy.close();
    }

    @Test
    void curlGetArrivesInOriginFormWithCanonicalHostAndWithoutProxyHeaders() {
        Command.Result r = Curl.viaProxy(
                proxy.port(),
                "-i",
                "--proxy-user",
                "agent:secret",
                "-H",
                "X-Agentjail-Reason: forged-by-client",
                "http://UPSTREAM.Test:" + port + "/hello/world?q=1&x=y");

        assertEquals(0, r.exitCode(), r::describe);
        String out = r.out();
        assertTrue(out.startsWith("HTTP/1.1 201"), out);
        assertTrue(out.toLowerCase(Locale.ROOT).contains("\r\nx-upstream: wiremock\r\n"), out);
        assertTrue(out.endsWith("\r\n\r\nstored by upstream"), out);

        LoggedRequest got = onlyUpstreamRequest();
        assertEquals("GET", got.getMethod().value());
        assertEquals("/hello/world?q=1&x=y", got.getUrl());
        assertEquals("upstream.test:" + port, got.getHeader("Host"), "the Host header is the canonical authority");
        assertNoProxyHeaders(got);

        AuditRecord rec = onlyRecord();
        assertEquals(AuditRecord.ALLOW, rec.decision());
        assertEquals("allowed", rec.reason());
        assertEquals("GET", rec.method());
        assertEquals("http", rec.scheme());
        assertEquals("upstream.test", rec.host());
        assertEquals(port, rec.port());
        assertEquals("/hello/world", rec.path(), "the query string never reaches the audit log");
        assertEquals(201, rec.status());
        assertEquals(AuditRecord.TLS_NONE, rec.tls());
        assertEquals("stored by upstream".length(), rec.bytesIn());
    }

    @Test
    void curlPostWithContentLengthArrivesByteForByte() throws Exception {
        // 2 MiB makes curl send "Expect: 100-continue", which the proxy answers itself.
        byte[] body = TestData.randomBytes(2 * 1024 * 1024, 1);
        Path file = Files.write(dir.resolve("post.bin"), body);

        Command.Result r = Curl.viaProxy(
                proxy.port(),
                "-i",
                "-H",
                "Content-Type: application/octet-stream",
                "--data-binary",
                "@" + file,
                "http://upstream.test:" + port + "/upload");

        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.out().startsWith("HTTP/1.1 100 "), () -> "the proxy answered Expect itself: " + r.out());
        assertTrue(r.out().contains("\r\n\r\nHTTP/1.1 201 "), r.out());
        assertTrue(r.out().endsWith("\r\n\r\nstored by upstream"), r.out());
        LoggedRequest got = onlyUpstreamRequest();
        assertEquals("POST", got.getMethod().value());
        assertFalse(got.containsHeader("Expect"), "Expect is hop-by-hop here: the proxy consumed it");
        assertEquals(String.valueOf(body.length), got.getHeader("Content-Length"));
        assertArrayEquals(body, got.getBody(), "the upstream received the body byte for byte");
        assertEquals("upstream.test:" + port, got.getHeader("Host"));
        assertNoProxyHeaders(got);
        assertEquals(body.length, onlyRecord().bytesOut());
    }

    @Test
    void curlChunkedPutStaysChunkedAndArrivesByteForByte() throws Exception {
        byte[] body = TestData.randomBytes(300_000, 2);
        Path file = Files.write(dir.resolve("put.bin"), body);

        Command.Result r = Curl.viaProxy(
                proxy.port(),
                "-i",
                "-X",
                "PUT",
                "-H",
                "Transfer-Encoding: chunked",
                "-H",
                "Content-Type: application/octet-stream",
                "--data-binary",
                "@" + file,
                "http://upstream.test:" + port + "/put/here");

        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.out().startsWith("HTTP/1.1 201"), r.out());
        LoggedRequest got = onlyUpstreamRequest();
        assertEquals("PUT", got.getMethod().value());
        assertEquals("/put/here", got.getUrl());
        assertEquals("chunked", got.getHeader("Transfer-Encoding"), "a chunked body is streamed on, not aggregated");
        assertFalse(got.containsHeader("Content-Length"));
        assertArrayEquals(body, got.getBody());
        assertNoProxyHeaders(got);
        AuditRecord rec = onlyRecord();
        assertEquals("PUT", rec.method());
        assertEquals(body.length, rec.bytesOut());
    }

    @Test
    void jdkClientGetPostAndChunkedPutOnOneKeptAliveConnection() throws Exception {
        byte[] postBody = TestData.randomBytes(100_000, 3);
        byte[] putBody = TestData.randomBytes(150_000, 4);
        try (HttpClient client = JdkClients.viaProxy(proxy.port())) {
            HttpResponse<String> get =
                    client.send(request("/jdk/get?secret=1").GET().build(), HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> post = client.send(
                    request("/jdk/post")
                            .POST(HttpRequest.BodyPublishers.ofByteArray(postBody))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            // An InputStream of unknown length makes the JDK client send chunked.
            HttpResponse<String> put = client.send(
                    request("/jdk/put")
                            .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(putBody)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());

            for (HttpResponse<String> response : List.of(get, post, put)) {
                assertEquals(201, response.statusCode());
                assertEquals("stored by upstream", response.body());
                assertEquals(
                        "wiremock", response.headers().firstValue("X-Upstream").orElse(null));
            }
        }

        List<LoggedRequest> got = upstreamRequests();
        assertEquals(3, got.size());
        assertEquals("GET", got.get(0).getMethod().value());
        assertEquals("/jdk/get?secret=1", got.get(0).getUrl());
        assertEquals("POST", got.get(1).getMethod().value());
        assertEquals(String.valueOf(postBody.length), got.get(1).getHeader("Content-Length"));
        assertArrayEquals(postBody, got.get(1).getBody());
        assertEquals("PUT", got.get(2).getMethod().value());
        assertEquals("chunked", got.get(2).getHeader("Transfer-Encoding"));
        assertArrayEquals(putBody, got.get(2).getBody());
        for (LoggedRequest r : got) {
            assertEquals("upstream.test:" + port, r.getHeader("Host"));
            assertNoProxyHeaders(r);
        }

        List<AuditRecord> records = AuditRecords.requests(proxy.records());
        assertEquals(3, records.size(), () -> "one record per request: " + records);
        assertEquals(
                List.of("GET", "POST", "PUT"),
                records.stream().map(AuditRecord::method).toList());
        assertEquals("/jdk/get", records.get(0).path());
        assertEquals(postBody.length, records.get(1).bytesOut());
        assertEquals(putBody.length, records.get(2).bytesOut());
        assertTrue(records.stream().allMatch(r -> r.decision().equals(AuditRecord.ALLOW) && r.status() == 201));
    }

    @Test
    void jdkClientWithItsDefaultHttp2PreferenceWorksOverHttp11() throws Exception {
        // What most Java agents run with: HTTP/2 preferred, which through a proxy means HTTP/1.1 and no h2c upgrade.
        try (HttpClient client = JdkClients.builder(proxy.port())
                .version(HttpClient.Version.HTTP_2)
                .build()) {
            HttpResponse<String> response =
                    client.send(request("/default-client").GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(201, response.statusCode());
            assertEquals("stored by upstream", response.body());
            assertEquals(HttpClient.Version.HTTP_1_1, response.version());
        }
        LoggedRequest got = onlyUpstreamRequest();
        assertFalse(got.containsHeader("Upgrade"), () -> "forwarded Upgrade: " + got.getHeaders());
        assertFalse(got.containsHeader("HTTP2-Settings"), () -> "forwarded HTTP2-Settings: " + got.getHeaders());
        assertEquals("upstream.test:" + port, got.getHeader("Host"));
    }

    @Test
    void pipelinedRequestsAreDecidedOneByOneAndAnsweredInOrder() throws Exception {
        String authority = "upstream.test:" + port;
        String pipeline = "GET http://" + authority + "/pipe/1 HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"
                + "GET http://" + Policies.DENIED + "/pipe/2 HTTP/1.1\r\nHost: " + Policies.DENIED + "\r\n\r\n"
                + "POST http://" + authority + "/pipe/3 HTTP/1.1\r\nHost: " + authority
                + "\r\nContent-Length: 4\r\n\r\nbody";
        List<RawHttp.Response> responses = new ArrayList<>();
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(pipeline.getBytes(StandardCharsets.US_ASCII)); // all three in one write
            out.flush();
            InputStream in = s.getInputStream();
            for (int i = 0; i < 3; i++) {
                try {
                    responses.add(RawHttp.read(in));
                } catch (IOException e) {
                    fail("response " + (i + 1) + " of 3 never came (" + e + "); got " + responses
                            + "; upstream saw "
                            + upstreamRequests().stream()
                                    .map(LoggedRequest::getUrl)
                                    .toList()
                            + "; records " + proxy.records());
                }
            }
        }
        assertEquals(
                List.of(201, 403, 201),
                responses.stream().map(RawHttp.Response::status).toList());
        assertEquals("stored by upstream", responses.get(0).body());
        assertEquals("not-in-allowlist", responses.get(1).header("X-Agentjail-Reason"));
        assertEquals("stored by upstream", responses.get(2).body());

        List<LoggedRequest> got = upstreamRequests();
        assertEquals(
                List.of("/pipe/1", "/pipe/3"),
                got.stream().map(LoggedRequest::getUrl).toList());
        assertEquals("body", got.get(1).getBodyAsString());
        assertEquals(
                List.of("allow /pipe/1", "deny /pipe/2", "allow /pipe/3"),
                AuditRecords.requests(proxy.records()).stream()
                        .map(r -> r.decision() + " " + r.path())
                        .toList());
    }

    @Test
    void curlToAHostOutsideTheAllowListGets403WithReason() {
        Command.Result r = Curl.viaProxy(proxy.port(), "-i", "http://" + Policies.DENIED + "/anything?token=abc");

        assertEquals(0, r.exitCode(), r::describe);
        String out = r.out();
        assertTrue(out.startsWith("HTTP/1.1 403"), out);
        assertTrue(out.toLowerCase(Locale.ROOT).contains("\r\nx-agentjail-reason: not-in-allowlist\r\n"), out);
        assertOneLineBody(out.substring(out.indexOf("\r\n\r\n") + 4));
        assertDenied();
    }

    @Test
    void jdkClientToAHostOutsideTheAllowListGets403WithReason() throws Exception {
        HttpResponse<String> response;
        try (HttpClient client = JdkClients.viaProxy(proxy.port())) {
            response = client.send(
                    HttpRequest.newBuilder(URI.create("http://" + Policies.DENIED + "/anything"))
                            .timeout(Duration.ofSeconds(30))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        }
        assertEquals(403, response.statusCode());
        assertEquals(
                "not-in-allowlist",
                response.headers().firstValue("X-Agentjail-Reason").orElse(null));
        assertOneLineBody(response.body());
        assertDenied();
    }

    private void assertDenied() {
        assertEquals(0, upstreamRequests().size(), "a denied request never reaches the upstream");
        AuditRecord rec = onlyRecord();
        assertEquals(AuditRecord.DENY, rec.decision());
        assertEquals("not-in-allowlist", rec.reason());
        assertEquals(Policies.DENIED, rec.host());
        assertEquals(80, rec.port());
        assertEquals("/anything", rec.path());
        assertEquals(403, rec.status());
        assertEquals(null, rec.resolvedIp(), "a denied name is never resolved");
    }

    private static void assertOneLineBody(String body) {
        assertTrue(body.endsWith("\n"), () -> "body: " + body);
        assertEquals(1, body.lines().count(), () -> "one human-readable line: " + body);
        assertTrue(body.contains(Policies.DENIED) && body.contains("not-in-allowlist"), body);
    }

    private static void assertNoProxyHeaders(LoggedRequest got) {
        for (HttpHeader h : got.getHeaders().all()) {
            String name = h.key().toLowerCase(Locale.ROOT);
            assertFalse(name.startsWith("proxy-"), () -> "forwarded a proxy header: " + h);
            assertFalse(name.startsWith("x-agentjail-"), () -> "forwarded the proxy's own header: " + h);
        }
    }

    private HttpRequest.Builder request(String pathAndQuery) {
        return HttpRequest.newBuilder(URI.create("http://upstream.test:" + port + pathAndQuery))
                .timeout(Duration.ofSeconds(30));
    }

    private static List<LoggedRequest> upstreamRequests() {
        return upstream.getAllServeEvents().reversed().stream()
                .map(e -> e.getRequest())
                .toList();
    }

    private static LoggedRequest onlyUpstreamRequest() {
        List<LoggedRequest> all = upstreamRequests();
        assertEquals(1, all.size(), () -> "requests seen by the upstream: " + all);
        return all.get(0);
    }

    private AuditRecord onlyRecord() {
        List<AuditRecord> records = AuditRecords.requests(proxy.records());
        assertEquals(1, records.size(), () -> "one audit record per request: " + records);
        return records.get(0);
    }
}
