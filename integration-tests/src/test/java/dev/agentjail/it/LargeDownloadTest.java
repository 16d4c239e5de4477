package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.agentjail.it.support.AuditRecords;
import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Curl;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.TestData;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A 10 MiB download arrives intact (same SHA-256) through plain HTTP and through CONNECT, with curl and the JDK. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LargeDownloadTest {
    private static final int SIZE = 10 * 1024 * 1024;

    static TestTls tls;
    static WireMockServer upstream;
    static String expectedSha256;

    @TempDir
    Path dir;

    private ProxyFixture proxy;

    @BeforeAll
    static void startUpstream() throws Exception {
        tls = TestTls.shared();
        byte[] payload = TestData.randomBytes(SIZE, 10);
        expectedSha256 = sha256(payload);
        upstream = new WireMockServer(wireMockConfig()
                .dynamicPort()
                .dynamicHttpsPort()
                .keystoreType("PKCS12")
                .keystorePath(tls.keystore().toString())
                .keystorePassword(TestTls.PASSWORD)
                .keyManagerPassword(TestTls.PASSWORD));
        upstream.start();
        upstream.stubFor(get("/big.bin")
                .willReturn(aResponse()
                        .withStatus(200)
                        .withHeader("Content-Type", "application/octet-stream")
                        .withBody(payload)));
    }

    @AfterAll
    static void stopUpstream() {
        upstream.stop();
    }

    @BeforeEach
    void startProxy() throws Exception {
        proxy = ProxyFixture.start(Policies.upstreamOn(upstream.port(), upstream.httpsPort()));
    }

    @AfterEach
    void stopProxy() {
        proxy.close();
    }

    @Test
    void curlOverPlainHttp() throws Exception {
        assertEquals(expectedSha256, curlDownload("http://upstream.test:" + upstream.port() + "/big.bin"));
        AuditRecord rec = awaitRecord();
        assertEquals(AuditRecord.TLS_NONE, rec.tls());
        assertEquals(SIZE, rec.bytesIn(), "bytes_in counts the body exactly");
    }

    @Test
    void curlThroughConnect() throws Exception {
        assertEquals(
                expectedSha256,
                curlDownload(
                        "--cacert",
                        tls.certificatePem().toString(),
                        "https://upstream.test:" + upstream.httpsPort() + "/big.bin"));
        assertTunnelCarriedTheDownload();
    }

    @Test
    void jdkClientOverPlainHttp() throws Exception {
        try (HttpClient client = JdkClients.viaProxy(proxy.port())) {
            assertEquals(expectedSha256, jdkDownload(client, "http://upstream.test:" + upstream.port()));
        }
        AuditRecord rec = awaitRecord();
        assertEquals(SIZE, rec.bytesIn());
        assertEquals(200, rec.status());
    }

    @Test
    void jdkClientThroughConnect() throws Exception {
        SSLContext trust = tls.clientContext();
        try (HttpClient client = JdkClients.viaProxy(proxy.port(), trust)) {
            assertEquals(expectedSha256, jdkDownload(client, "https://upstream.test:" + upstream.httpsPort()));
        }
        assertTunnelCarriedTheDownload();
    }

    private String curlDownload(String... target) throws IOException {
        Path out = dir.resolve("big.bin");
        List<String> args = new java.util.ArrayList<>(List.of("-o", out.toString(), "-w", "%{http_code}"));
        args.addAll(List.of(target));
        Command.Result r = Curl.viaProxy(proxy.port(), args.toArray(String[]::new));
        assertEquals(0, r.exitCode(), r::describe);
        assertEquals("200", r.out());
        assertEquals(SIZE, Files.size(out));
        try (InputStream in = Files.newInputStream(out)) {
            return sha256(in);
        }
    }

    private static String jdkDownload(HttpClient client, String origin) throws Exception {
        HttpResponse<InputStream> response = client.send(
                HttpRequest.newBuilder(URI.create(origin + "/big.bin"))
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        try (InputStream in = response.body()) {
            return sha256(in);
        }
    }

    /** The byte counts of a tunnel are in its tunnel-close record, written when it closes after the client has gone. */
    private void assertTunnelCarriedTheDownload() {
        Await.until(
                Duration.ofSeconds(10),
                () -> !AuditRecords.tunnelCloses(proxy.records()).isEmpty(),
                () -> "no tunnel-close record: " + proxy.records());
        List<AuditRecord> records = proxy.records();
        assertEquals(
                List.of(AuditRecord.KIND_REQUEST, AuditRecord.KIND_TUNNEL_CLOSE),
                records.stream().map(AuditRecord::kind).toList(),
                records::toString);
        AuditRecord request = records.get(0);
        assertEquals(AuditRecord.ALLOW, request.decision());
        assertEquals(AuditRecord.TLS_TUNNEL, request.tls());
        assertEquals("CONNECT", request.method());
        assertEquals(
                0, request.bytesIn(), () -> "the request record is written before any byte is relayed: " + request);
        AuditRecord close = records.get(1);
        assertEquals(AuditRecord.ALLOW, close.decision());
        assertEquals(AuditRecord.TLS_TUNNEL, close.tls());
        assertEquals("CONNECT", close.method());
        assertTrue(close.bytesIn() > SIZE, () -> "bytes_in counts at least the 10 MiB plus TLS framing: " + close);
    }

    private AuditRecord awaitRecord() {
        Await.until(Duration.ofSeconds(10), () -> !proxy.records().isEmpty(), () -> "no audit record");
        List<AuditRecord> records = proxy.records();
        assertEquals(1, records.size(), records::toString);
        assertEquals(AuditRecord.KIND_REQUEST, records.get(0).kind());
        assertEquals(AuditRecord.ALLOW, records.get(0).decision());
        return records.get(0);
    }

    private static String sha256(byte[] data) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }

    private static String sha256(InputStream in) throws IOException {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            try (OutputStream sink = new DigestOutputStream(OutputStream.nullOutputStream(), digest)) {
                in.transferTo(sink);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
