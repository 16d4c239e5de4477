package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentjail.it.support.AuditRecords;
import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Node's HTTP client through the proxy: {@code node:http} with absolute-form for plain HTTP, and CONNECT then
 * {@code node:tls} trusting only the upstream's certificate for HTTPS. Node 20's {@code fetch} (undici) has no proxy
 * support without the separate undici package, so fetch itself is not exercised here.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeClientTest {
    @TempDir
    Path dir;

    @Test
    void nodeHttpAndTlsThroughTheProxy() throws Exception {
        Path node = Prerequisites.require(Prerequisites.NODE);
        TestTls tls = TestTls.shared();
        Path script = dir.resolve("node-client.mjs");
        try (InputStream in = NodeClientTest.class.getResourceAsStream("node-client.mjs")) {
            assertNotNull(in, "node-client.mjs resource");
            Files.copy(in, script);
        }
        WireMockServer upstream = new WireMockServer(wireMockConfig()
                .dynamicPort()
                .dynamicHttpsPort()
                .keystoreType("PKCS12")
                .keystorePath(tls.keystore().toString())
                .keystorePassword(TestTls.PASSWORD)
                .keyManagerPassword(TestTls.PASSWORD));
        upstream.start();
        try (ProxyFixture proxy = ProxyFixture.start(Policies.upstreamOn(upstream.port(), upstream.httpsPort()))) {
            upstream.stubFor(
                    any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("hello node")));

            Command.Result r = Command.run(
                    Duration.ofSeconds(45),
                    List.of(
                            node.toString(),
                            script.toString(),
                            String.valueOf(proxy.port()),
                            String.valueOf(upstream.port()),
                            String.valueOf(upstream.httpsPort()),
                            tls.certificatePem().toString()),
                    Map.of(),
                    dir);
            assertEquals(0, r.exitCode(), r::describe);
            JsonNode out = new ObjectMapper().readTree(r.stdout());

            assertEquals(200, out.path("plain").path("status").asInt(), out::toString);
            assertEquals("hello node", out.path("plain").path("body").asText());
            assertEquals(403, out.path("plainDenied").path("status").asInt(), out::toString);
            assertEquals(
                    "not-in-allowlist", out.path("plainDenied").path("reason").asText());
            assertEquals(200, out.path("tunnel").path("connectStatus").asInt(), out::toString);
            assertEquals(200, out.path("tunnel").path("status").asInt(), out::toString);
            assertEquals("hello node", out.path("tunnel").path("body").asText());
            assertEquals(403, out.path("tunnelDenied").path("connectStatus").asInt(), out::toString);
            assertEquals(
                    "not-in-allowlist", out.path("tunnelDenied").path("reason").asText());

            List<LoggedRequest> got = upstream.getAllServeEvents().reversed().stream()
                    .map(e -> e.getRequest())
                    .toList();
            assertEquals(2, got.size(), got::toString);
            assertEquals("/from/node?q=1", got.get(0).getUrl());
            assertEquals("hello from node", got.get(0).getBodyAsString());
            assertEquals("upstream.test:" + upstream.port(), got.get(0).getHeader("Host"));
            assertEquals("/secure/node", got.get(1).getUrl());

            // An allowed CONNECT leaves a request record before its 200 and a tunnel-close record when the tunnel
            // closes; only the request records count as requests.
            Await.until(
                    Duration.ofSeconds(10),
                    () -> AuditRecords.tunnelCloses(proxy.records()).size() == 1,
                    () -> "no tunnel-close record: " + proxy.records());
            List<AuditRecord> records = proxy.records();
            assertEquals(
                    List.of("CONNECT allow tunnel", "CONNECT deny none", "POST allow none", "POST deny none"),
                    AuditRecords.requests(records).stream()
                            .map(NodeClientTest::summary)
                            .sorted()
                            .toList(),
                    records::toString);
            assertEquals(5, records.size(), records::toString);
            AuditRecord close = AuditRecords.tunnelCloses(records).get(0);
            assertEquals("CONNECT allow tunnel", summary(close));
            assertTrue(
                    close.bytesOut() > 0 && close.bytesIn() > "hello node".length(),
                    () -> "the tunnel carried a TLS handshake and a response: " + close);
        } finally {
            upstream.stop();
        }
    }

    private static String summary(AuditRecord r) {
        return r.method() + " " + r.decision() + " " + r.tls();
    }
}
