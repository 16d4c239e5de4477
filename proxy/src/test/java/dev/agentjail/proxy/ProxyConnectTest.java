package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.CorpusProxy.WAIT;
import static dev.agentjail.proxy.testing.CorpusProxy.connect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.CorpusProxy;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Corpus section 3, cases 45–49, through a real proxy: CONNECT targets, ports, Host checks and early bytes. */
class ProxyConnectTest {
    /** The start of a TLS 1.2 ClientHello record, enough to look like one on the wire. */
    private static final String CLIENT_HELLO =
            "\u0016\u0003\u0001\u0000\u00c8\u0001\u0000\u0000\u00c4\u0003\u0003" + "0123456789abcdef0123456789abcdef";

    private CorpusProxy env;

    @BeforeEach
    void start() throws Exception {
        env = CorpusProxy.start();
    }

    @AfterEach
    void stop() throws Exception {
        env.close();
    }

    @ParameterizedTest(name = "45 CONNECT allowed.test:{0}")
    @MethodSource
    void connectToOtherPortsOfAnAllowedHostIsDenied(int port) throws Exception {
        RawResponse response = env.exchange(connect("allowed.test:" + port));

        assertEquals(403, response.status());
        assertEquals("not-in-allowlist", response.header(ProxyReasons.HEADER));
        assertTrue(response.closes(), "a denied CONNECT closes the connection");
        env.upstream.assertUntouched();
        assertEquals(List.of(), env.dns.queries());
        AuditRecord record = env.onlyRecord();
        assertEquals("deny", record.decision());
        assertEquals(port, record.port());
        assertEquals("CONNECT", record.method());
    }

    static Stream<Integer> connectToOtherPortsOfAnAllowedHostIsDenied() {
        return Stream.of(22, 25, 6379, 3306, 8443);
    }

    static Stream<Arguments> badConnects() {
        return Stream.of(
                Arguments.of(
                        "46 absolute URI",
                        "CONNECT https://allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
                        400,
                        "bad-target"),
                Arguments.of(
                        "46 origin-form", "CONNECT /x HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n", 400, "bad-target"),
                Arguments.of(
                        "46 userinfo",
                        "CONNECT user@allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
                        400,
                        "bad-target"),
                Arguments.of(
                        "46 authority confusion",
                        "CONNECT allowed.test:443@evil.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
                        400,
                        "bad-target"),
                Arguments.of(
                        "46 lower-case method",
                        "connect allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
                        501,
                        "bad-method"),
                Arguments.of(
                        "47 Host disagrees",
                        "CONNECT api.allowed.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n",
                        400,
                        "bad-host-header"),
                Arguments.of(
                        "47 Host disagrees on the port",
                        "CONNECT api.allowed.test:443 HTTP/1.1\r\nHost: api.allowed.test:8443\r\n\r\n",
                        400,
                        "bad-host-header"),
                Arguments.of(
                        "48 CONNECT with a body",
                        "CONNECT api.allowed.test:443 HTTP/1.1\r\nHost: api.allowed.test:443\r\nContent-Length: 5\r\n\r\nhello",
                        400,
                        "ambiguous-framing"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badConnects")
    void malformedConnectsAreRejectedAndNeverTunnelled(String name, String request, int status, String reason)
            throws Exception {
        try (RawClient client = env.client()) {
            client.send(request);
            RawResponse response = client.readResponse(WAIT);

            assertEquals(status, response.status());
            assertEquals(reason, response.header(ProxyReasons.HEADER));
            assertTrue(client.awaitClose(WAIT), "connection closed after the refusal");
        }
        env.upstream.assertUntouched();
        assertEquals(List.of(), env.dns.queries());
        AuditRecord record = env.onlyRecord();
        assertEquals("error", record.decision());
        assertEquals(reason, record.reason());
    }

    @Test
    void case49ADeniedConnectNeverForwardsTheClientHelloSentWithIt() throws Exception {
        // blocked.rebind.test:<port> is denied by a rule but pinned to the recorder: a deny that leaked would show.
        String target = "blocked.rebind.test:" + env.upstream.port();
        try (RawClient client = env.client()) {
            client.send(connect(target) + CLIENT_HELLO);
            String received = client.readUntilClose(WAIT);

            assertTrue(received.startsWith("HTTP/1.1 403 "), received);
            assertFalse(received.contains(" 200 "), received);
            assertTrue(client.closedByPeer());
        }
        env.upstream.assertUntouched();
        AuditRecord record = env.onlyRecord();
        assertEquals("denied-by-rule", record.reason());
        assertEquals("network.deny[1]=blocked.rebind.test:" + env.upstream.port(), record.rule());
    }

    @Test
    void case49ANotAllowedConnectNeverForwardsTheClientHelloSentWithIt() throws Exception {
        try (RawClient client = env.client()) {
            client.send(connect("evil.test:443") + CLIENT_HELLO);
            String received = client.readUntilClose(WAIT);

            assertTrue(received.startsWith("HTTP/1.1 403 "), received);
            assertFalse(received.contains(" 200 "), received);
        }
        env.upstream.assertUntouched();
        assertEquals(List.of(), env.dns.queries());
        assertEquals("not-in-allowlist", env.onlyRecord().reason());
    }

    @Test
    void anAllowedConnectRelaysEarlyBytesFirstThenBothWays() throws Exception {
        try (RecordingUpstream echo = RecordingUpstream.start(r -> "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong");
                CorpusProxy tunnel = CorpusProxy.start(echo)) {
            try (RawClient client = tunnel.client()) {
                // The first request rides in the same write as the CONNECT head, the second after the 200.
                String first = "GET /one HTTP/1.1\r\nHost: x\r\n\r\n";
                client.send(connect(tunnel.up()) + first);
                String established = client.readUntil("pong", WAIT);
                client.send("GET /two HTTP/1.1\r\nHost: x\r\n\r\n");
                String all = client.readUntil("pongHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong", WAIT);

                assertTrue(established.startsWith("HTTP/1.1 200 Connection established\r\n\r\n"), established);
                assertTrue(all.endsWith("\r\n\r\npongHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong"), all);
                assertEquals(2, echo.requests().size());
                assertEquals("GET /one HTTP/1.1", echo.requests().get(0).requestLine());
                assertEquals("GET /two HTTP/1.1", echo.requests().get(1).requestLine());
            }
            AuditRecord record = tunnel.onlyRecord();
            assertEquals("allow", record.decision());
            assertEquals("tunnel", record.tls());
            assertEquals(200, record.status());
            RecordingUpstream.await(() -> tunnel.tunnelCloses().size() == 1, Duration.ofSeconds(5));
            AuditRecord closed = tunnel.tunnelCloses().getFirst();
            assertEquals(200, closed.status());
            assertTrue(closed.bytesOut() > 0 && closed.bytesIn() > 0, closed.toString());
        }
    }

    @Test
    void case46ConnectOverHttp10IsAccepted() throws Exception {
        try (RawClient client = env.client()) {
            client.send("CONNECT " + env.up() + " HTTP/1.0\r\n\r\n");
            String received = client.readUntil("\r\n\r\n", WAIT);

            assertTrue(received.startsWith("HTTP/1.1 200 "), received);
        }
        assertEquals(1, env.upstream.connections());
        assertEquals("allow", env.onlyRecord().decision());
    }
}
