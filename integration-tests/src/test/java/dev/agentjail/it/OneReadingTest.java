package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentjail.it.support.AuditRecords;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Curl;
import dev.agentjail.it.support.Policies;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.Compressed;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 17 with curl and a WireMock upstream: what the upstream gets is exactly what the proxy scanned. A gzip body
 * goes out as the proxy's encoding of the scanned bytes; a second member, two {@code Content-Encoding} lines or a
 * secret as a header name never reach the upstream as sent.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OneReadingTest {
    /** Synthetic canary in the real format; never a real key. */
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().dynamicPort())
            .build();

    @TempDir
    Path dir;

    private ProxyFixture proxy;
    private String url;

    @BeforeEach
    void startProxy() throws Exception {
        proxy = ProxyFixture.start(Policies.upstreamOn(upstream.getPort()));
        url = "http://" + Policies.UPSTREAM + ":" + upstream.getPort() + "/v1/messages";
        upstream.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("ok")));
    }

    @AfterEach
    void stopProxy() {
        proxy.close();
    }

    @Test
    void aGzipBodyArrivesAsTheRedactedReEncodingOfWhatWasScanned() throws Exception {
        byte[] plain = ("{\"content\":\"my token is " + PAT + "\"}").getBytes(StandardCharsets.UTF_8);
        byte[] sent = Compressed.gzip(plain, Compressed.FNAME);

        Command.Result r = post(sent, "-H", "Content-Encoding: gzip");

        assertTrue(r.out().startsWith("HTTP/1.1 200"), r::describe);
        LoggedRequest got = onlyUpstreamRequest();
        assertEquals("gzip", got.getHeader("Content-Encoding"));
        // WireMock gunzips a gzip request body itself: this is what the upstream read.
        byte[] decoded = got.getBody();
        String text = new String(decoded, StandardCharsets.UTF_8);
        assertFalse(text.contains(PAT), text);
        assertEquals(plain.length, decoded.length);
        assertTrue(text.startsWith("{\"content\":\"my token is "), text);
    }

    @Test
    void aSecondGzipMemberNeverReachesTheUpstream() throws Exception {
        byte[] first = Compressed.gzip("{\"content\":\"hi\"}".getBytes(StandardCharsets.UTF_8), 0);
        byte[] second = Compressed.gzip(PAT.getBytes(StandardCharsets.US_ASCII), Compressed.FHCRC);

        Command.Result r = post(Compressed.concat(first, second), "-H", "Content-Encoding: gzip");

        assertTrue(r.out().startsWith("HTTP/1.1 400"), r::describe);
        assertTrue(r.out().contains("content-encoding-trailing-data"), r::describe);
        assertEquals(List.of(), upstreamRequests());
        assertEquals("content-encoding-trailing-data", onlyRecord().reason());
    }

    @Test
    void twoContentEncodingLinesAreRefusedBeforeAnythingIsDecided() throws Exception {
        byte[] body = Compressed.gzip(PAT.getBytes(StandardCharsets.US_ASCII), 0);

        Command.Result r = post(body, "-H", "Content-Encoding: identity", "-H", "content-encoding: gzip");

        assertTrue(r.out().startsWith("HTTP/1.1 400"), r::describe);
        assertTrue(r.out().contains("ambiguous-body-header"), r::describe);
        assertEquals(List.of(), upstreamRequests());
    }

    @Test
    void aSecretAsAHeaderNameIsDropped() {
        Command.Result r = Curl.viaProxy(proxy.port(), "-i", "-H", "X-" + PAT + ": 1", "-H", "X-Kept: yes", url);

        assertTrue(r.out().startsWith("HTTP/1.1 200"), r::describe);
        LoggedRequest got = onlyUpstreamRequest();
        assertEquals("yes", got.getHeader("X-Kept"));
        got.getHeaders().all().forEach(h -> assertFalse(h.key().contains(PAT.substring(4)), h::toString));
        assertEquals("header-name", onlyRecord().redactions().getFirst().location());
    }

    private Command.Result post(byte[] body, String... headers) throws Exception {
        Path file = Files.write(dir.resolve("body.bin"), body);
        String[] args = new String[headers.length + 6];
        System.arraycopy(headers, 0, args, 0, headers.length);
        System.arraycopy(
                new String[] {"-i", "-H", "Content-Type: application/json", "--data-binary", "@" + file, url},
                0,
                args,
                headers.length,
                6);
        return Curl.viaProxy(proxy.port(), args);
    }

    private static List<LoggedRequest> upstreamRequests() {
        return upstream.getAllServeEvents().stream().map(e -> e.getRequest()).toList();
    }

    private static LoggedRequest onlyUpstreamRequest() {
        List<LoggedRequest> all = upstreamRequests();
        assertEquals(1, all.size(), () -> "requests seen by the upstream: " + all);
        return all.getFirst();
    }

    private AuditRecord onlyRecord() {
        List<AuditRecord> records = AuditRecords.requests(proxy.records());
        assertEquals(1, records.size(), () -> "one audit record per request: " + records);
        return records.getFirst();
    }
}
