package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.Policies;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.FileAuditLog;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly one audit record per request in a real audit file while 64 clients run at once, a mix of allowed and
 * denied requests on kept-alive connections; every record is on disk by the time its client has the response.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ConcurrentAuditTest {
    private static final int CLIENTS = 64;
    private static final int REQUESTS_PER_CLIENT = 20;

    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().dynamicPort().containerThreads(CLIENTS + 16))
            .build();

    @TempDir
    Path dir;

    @Test
    void recordCountEqualsRequestCountUnder64ConcurrentClients() throws Exception {
        upstream.stubFor(get(urlPathMatching("/c/.*"))
                .willReturn(aResponse().withStatus(200).withBody("ok")));
        Path log = dir.resolve("state/audit.jsonl");
        FileAuditLog audit = FileAuditLog.open(log, Duration.ofMillis(100));
        Set<String> allowedPaths = new HashSet<>();
        Set<String> deniedPaths = new HashSet<>();
        try (ProxyFixture proxy =
                ProxyFixture.start(Policies.upstreamOn(upstream.getPort()), audit, null, Timeouts.defaults())) {
            CountDownLatch go = new CountDownLatch(1);
            List<Callable<Void>> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(() -> runClient(proxy.port(), client, go));
                for (int i = 0; i < REQUESTS_PER_CLIENT; i++) {
                    (denied(client, i) ? deniedPaths : allowedPaths).add(path(client, i));
                }
            }
            ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
            try {
                List<Future<Void>> running = clients.stream().map(pool::submit).toList();
                go.countDown();
                for (Future<Void> f : running) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }

            // Every client has its response, so every record must already be in the file.
            List<JsonNode> records = AuditLines.requests(AuditLines.read(log));
            assertEquals(CLIENTS * REQUESTS_PER_CLIENT, records.size(), "one record per request");
            assertEquals(
                    Map.of("allow", (long) allowedPaths.size(), "deny", (long) deniedPaths.size()),
                    AuditLines.countBy(records, "decision"));
            Set<String> recordedAllowed = new HashSet<>();
            Set<String> recordedDenied = new HashSet<>();
            for (JsonNode r : records) {
                boolean allow = r.path("decision").asText().equals("allow");
                assertEquals(
                        allow ? "allowed" : "not-in-allowlist", r.path("reason").asText(), r::toString);
                assertEquals(allow ? 200 : 403, r.path("status").asInt(), r::toString);
                assertEquals("test-session", r.path("session").asText(), r::toString);
                assertTrue(
                        (allow ? recordedAllowed : recordedDenied)
                                .add(r.path("path").asText()),
                        () -> "two records for one request: " + r);
            }
            assertEquals(allowedPaths, recordedAllowed);
            assertEquals(deniedPaths, recordedDenied);
            assertEquals(allowedPaths.size(), upstream.getAllServeEvents().size());
        } finally {
            audit.close();
        }
    }

    private Void runClient(int proxyPort, int client, CountDownLatch go) throws Exception {
        try (HttpClient http = JdkClients.viaProxy(proxyPort)) {
            go.await(10, TimeUnit.SECONDS);
            for (int i = 0; i < REQUESTS_PER_CLIENT; i++) {
                String host = denied(client, i) ? Policies.DENIED : "upstream.test:" + upstream.getPort();
                HttpResponse<String> response = http.send(
                        HttpRequest.newBuilder(URI.create("http://" + host + path(client, i) + "?n=" + i))
                                .timeout(Duration.ofSeconds(30))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(denied(client, i) ? 403 : 200, response.statusCode(), () -> "client " + client);
            }
        }
        return null;
    }

    /** One request in four goes to a host outside the allow list. */
    private static boolean denied(int client, int i) {
        return (client + i) % 4 == 3;
    }

    private static String path(int client, int i) {
        return "/c/" + client + "/" + i;
    }
}
