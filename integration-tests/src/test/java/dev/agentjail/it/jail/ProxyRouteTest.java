package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The proxy is the jail's one way out: curl inside, using only the environment the jail sets, reaches an allowed
 * WireMock upstream on the host's loopback over plain HTTP and through a CONNECT tunnel (trusting only the upstream's
 * own certificate, bound in by the policy); a host outside the allow list, and the upstream's address as an IP
 * literal, get the proxy's 403 with its reason header and never reach the upstream; the audit log holds the session's
 * start record, one record per request and the end record with the exit code and the request and denial counts.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ProxyRouteTest {
    static WireMockServer upstream;
    static TestTls tls;

    @TempDir
    static Path tlsDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startUpstream() throws Exception {
        tls = TestTls.create(tlsDir);
        upstream = new WireMockServer(wireMockConfig()
                .bindAddress("127.0.0.1")
                .dynamicPort()
                .dynamicHttpsPort()
                .keystoreType("PKCS12")
                .keystorePath(tls.keystore().toString())
                .keystorePassword(TestTls.PASSWORD)
                .keyManagerPassword(TestTls.PASSWORD));
        upstream.start();
        upstream.stubFor(any(anyUrl())
                .willReturn(aResponse()
                        .withStatus(200)
                        .withHeader("X-Upstream", "wiremock")
                        .withBody("hello from upstream")));
    }

    @AfterAll
    static void stopUpstream() {
        if (upstream != null) {
            upstream.stop();
        }
    }

    @Test
    void curlReachesAnAllowedUpstreamOnlyThroughTheProxyAndTheSessionIsAudited() throws Exception {
        AgentjailRun.requireBwrap();
        int http = upstream.port();
        int https = upstream.httpsPort();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                        version: 1
                        network:
                          allow: ["upstream.test:%1$d", "upstream.test:%2$d"]
                          resolve: {upstream.test: 127.0.0.1}
                          tunnel: ["upstream.test:%2$d"]
                        filesystem:
                          read: ["%3$s"]
                        """.formatted(http, https, tls.certificatePem()));
        AgentjailRun.Outcome o = run.bash("""
                echo "allowed=$(curl -q -sS -m 20 -w ' %%{http_code}' http://upstream.test:%1$d/from-the-jail)"
                echo "tunnel=$(curl -q -sS -m 20 --cacert %3$s -w ' %%{http_code}' \\
                    https://upstream.test:%2$d/through-a-tunnel)"
                curl -q -sS -m 20 -D /tmp/denied.h -o /dev/null http://denied.test/secret
                echo "denied=$(head -1 /tmp/denied.h | tr -d '\\r')"
                echo "denied_reason=$(grep -i '^%4$s:' /tmp/denied.h | cut -d: -f2- | tr -d ' \\r')"
                curl -q -sS -m 20 -D /tmp/literal.h -o /dev/null http://127.0.0.1:%1$d/by-ip-literal
                echo "literal=$(head -1 /tmp/literal.h | tr -d '\\r')"
                exit 3
                """.formatted(http, https, tls.certificatePem(), ProxyReasons.HEADER));

        assertEquals(3, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("hello from upstream 200", o.probe("allowed"), o::describe),
                () -> assertEquals("hello from upstream 200", o.probe("tunnel"), o::describe),
                () -> assertTrue(o.probe("denied").matches("HTTP/1\\.1 403\\b.*"), o::describe),
                () -> assertEquals(Reasons.NOT_ALLOWED, o.probe("denied_reason"), o::describe),
                () -> assertTrue(o.probe("literal").matches("HTTP/1\\.1 403\\b.*"), o::describe));
        assertEquals(
                List.of("/from-the-jail", "/through-a-tunnel"),
                upstream.getAllServeEvents().stream()
                        .map(e -> e.getRequest().getUrl())
                        .sorted()
                        .toList(),
                "what the upstream received");

        JsonNode start = o.only(AuditRecord.KIND_SESSION_START);
        String session = start.path("session").asText();
        assertAll(
                () -> assertEquals(
                        sha256(Files.readAllBytes(run.policyFile())),
                        start.path("policy_sha256").asText(),
                        "policy hash"),
                () -> assertEquals("bash", start.path("command").path(0).asText(), start::toString),
                () -> assertTrue(
                        start.path("binds")
                                .toString()
                                .contains(run.project().toRealPath().toString()),
                        start::toString),
                () -> assertTrue(start.path("env_names").toString().contains("\"HTTPS_PROXY\""), start::toString));

        List<JsonNode> requests = o.records(AuditRecord.KIND_REQUEST);
        assertTrue(
                requests.stream().allMatch(r -> session.equals(r.path("session").asText())), requests::toString);
        JsonNode allowed = onlyRequest(requests, "upstream.test", http);
        assertAll(
                () -> assertEquals(AuditRecord.ALLOW, allowed.path("decision").asText(), allowed::toString),
                () -> assertEquals("/from-the-jail", allowed.path("path").asText(), allowed::toString),
                () -> assertEquals(200, allowed.path("status").asInt(), allowed::toString));
        JsonNode tunnel = onlyRequest(requests, "upstream.test", https);
        assertAll(
                () -> assertEquals(AuditRecord.ALLOW, tunnel.path("decision").asText(), tunnel::toString),
                () -> assertEquals("CONNECT", tunnel.path("method").asText(), tunnel::toString));
        JsonNode denied = onlyRequest(requests, "denied.test", 80);
        assertAll(
                () -> assertEquals(AuditRecord.DENY, denied.path("decision").asText(), denied::toString),
                () -> assertEquals(Reasons.NOT_ALLOWED, denied.path("reason").asText(), denied::toString));
        JsonNode literal = onlyRequest(requests, "127.0.0.1", http);
        assertEquals(AuditRecord.DENY, literal.path("decision").asText(), literal::toString);

        JsonNode end = o.only(AuditRecord.KIND_SESSION_END);
        assertAll(
                () -> assertEquals(session, end.path("session").asText(), end::toString),
                () -> assertEquals(3, end.path("exit_code").asInt(), end::toString),
                () -> assertEquals(4, end.path("requests").asInt(), end::toString),
                () -> assertEquals(2, end.path("denials").asInt(), end::toString),
                () -> assertTrue(end.has("duration_ms"), end::toString));
        List<String> kinds =
                o.audit().stream().map(r -> r.path("kind").asText()).toList();
        assertEquals(AuditRecord.KIND_SESSION_START, kinds.get(0), "the first record: " + kinds);
        assertEquals(AuditRecord.KIND_SESSION_END, kinds.get(kinds.size() - 1), "the last record: " + kinds);
        assertFalse(o.err().toLowerCase(Locale.ROOT).contains("exception"), o::describe);
    }

    private static JsonNode onlyRequest(List<JsonNode> requests, String host, int port) {
        List<JsonNode> found = requests.stream()
                .filter(r ->
                        host.equals(r.path("host").asText()) && r.path("port").asInt() == port)
                .toList();
        assertEquals(1, found.size(), () -> "request records for " + host + ":" + port + " in " + requests);
        return found.get(0);
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
