package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * A WireMock HTTPS upstream for the HTTPS-inspection tests: its own self-signed certificate for {@code upstream.test}
 * (made with keytool), which the proxy trusts only through the policy's {@code tls.upstream_ca}; the jail never sees
 * that certificate and trusts only agentjail's CA bundle.
 */
final class InterceptedUpstream implements AutoCloseable {
    static final String HOST = TestTls.HOST;

    private final TestTls tls;
    private final WireMockServer server;

    private InterceptedUpstream(TestTls tls, WireMockServer server) {
        this.tls = tls;
        this.server = server;
    }

    /** Starts WireMock on loopback, HTTPS on a free port, with a certificate generated under {@code tlsDir}. */
    static InterceptedUpstream start(Path tlsDir) throws Exception {
        TestTls tls = TestTls.create(tlsDir);
        WireMockServer server = new WireMockServer(wireMockConfig()
                .bindAddress("127.0.0.1")
                .dynamicPort()
                .dynamicHttpsPort()
                .keystoreType("PKCS12")
                .keystorePath(tls.keystore().toString())
                .keystorePassword(TestTls.PASSWORD)
                .keyManagerPassword(TestTls.PASSWORD));
        server.start();
        return new InterceptedUpstream(tls, server);
    }

    WireMockServer server() {
        return server;
    }

    int httpsPort() {
        return server.httpsPort();
    }

    /** {@code https://upstream.test:PORT} */
    String origin() {
        return "https://" + HOST + ":" + httpsPort();
    }

    /** The PEM of the upstream's own certificate (for {@code tls.upstream_ca}; never bound into the jail). */
    Path certificatePem() {
        return tls.certificatePem();
    }

    /**
     * A policy allowing only the upstream's HTTPS port, pinning {@code upstream.test} to 127.0.0.1 and trusting the
     * upstream's certificate for the proxy's own upstream TLS; {@code extra} is appended (further top-level sections).
     */
    String policy(String extra) {
        return """
                version: 1
                network:
                  allow: ["%1$s:%2$d"]
                  resolve: {%1$s: 127.0.0.1}
                tls:
                  upstream_ca: ["%3$s"]
                """.formatted(HOST, httpsPort(), certificatePem()) + extra;
    }

    /** The requests WireMock received for {@code url} (path and query, as sent). */
    List<LoggedRequest> received(String url) {
        return server.getAllServeEvents().stream()
                .map(e -> e.getRequest())
                .filter(r -> r.getUrl().equals(url))
                .toList();
    }

    /** The audit record of the intercepted request for {@code path} on this upstream, if there is one. */
    Optional<JsonNode> requestRecord(List<JsonNode> audit, String path) {
        return audit.stream()
                .filter(r -> AuditRecord.KIND_REQUEST.equals(r.path("kind").asText()))
                .filter(r ->
                        HOST.equals(r.path("host").asText()) && r.path("port").asInt() == httpsPort())
                .filter(r -> path.equals(r.path("path").asText()))
                .findFirst();
    }

    @Override
    public void close() {
        server.stop();
    }
}
