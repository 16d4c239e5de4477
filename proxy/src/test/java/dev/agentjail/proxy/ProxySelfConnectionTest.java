package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.CorpusProxy.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The proxy never dials its own listeners (issue 17 point 12), however the policy lets the address through: an
 * allowed IP literal, a name pinned by {@code network.resolve}, plain requests and CONNECTs, over IPv4 and IPv6. The
 * proxy listens on 127.0.0.1 and [::1] at one port; every refusal is counted as exactly one record, since a loop
 * would write one record per turn.
 */
@org.junit.jupiter.api.extension.ExtendWith(NettyLeakGuard.class)
class ProxySelfConnectionTest {
    private static final String P = "PORT";

    private ProxyFixture proxy;
    private int port;

    @BeforeEach
    void start() throws Exception {
        try (ServerSocket reserve = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = reserve.getLocalPort();
        }
        proxy = ProxyFixture.startOn(port, """
                version: 1
                network:
                  allow: ["127.0.0.1:%1$d", "[::1]:%1$d", "0.0.0.0:%1$d", "self.test:%1$d", "self6.test:%1$d"]
                  resolve: {self.test: 127.0.0.1, self6.test: "::1"}
                """.formatted(port));
        proxy.listen(new InetSocketAddress(InetAddress.getByName("::1"), port));
    }

    @AfterEach
    void stop() {
        proxy.close();
    }

    static Stream<Arguments> selfTargets() {
        return Stream.of(
                Arguments.of(
                        "allowed IPv4 literal", "GET http://127.0.0.1:PORT/ HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n"),
                Arguments.of("allowed IPv6 literal", "GET http://[::1]:PORT/ HTTP/1.1\r\nHost: [::1]:PORT\r\n\r\n"),
                Arguments.of("allowed 0.0.0.0", "GET http://0.0.0.0:PORT/ HTTP/1.1\r\nHost: 0.0.0.0:PORT\r\n\r\n"),
                Arguments.of("pinned name", "GET http://self.test:PORT/ HTTP/1.1\r\nHost: self.test:PORT\r\n\r\n"),
                Arguments.of(
                        "pinned name to ::1", "GET http://self6.test:PORT/ HTTP/1.1\r\nHost: self6.test:PORT\r\n\r\n"),
                Arguments.of(
                        "CONNECT to the literal", "CONNECT 127.0.0.1:PORT HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n"),
                Arguments.of("CONNECT to [::1]", "CONNECT [::1]:PORT HTTP/1.1\r\nHost: [::1]:PORT\r\n\r\n"),
                Arguments.of(
                        "CONNECT to the pinned name",
                        "CONNECT self.test:PORT HTTP/1.1\r\nHost: self.test:PORT\r\n\r\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void selfTargets(String name, String template) throws Exception {
        for (InetSocketAddress via : List.of(
                new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port),
                new InetSocketAddress(InetAddress.getByName("::1"), port))) {
            try (RawClient client = RawClient.connect(via)) {
                client.send(template.replace(P, Integer.toString(port)));
                RawResponse response = client.readResponse(WAIT);

                assertEquals(403, response.status(), response.toString());
                assertEquals(ProxyReasons.SELF_CONNECTION, response.header(ProxyReasons.HEADER));
            }
        }
        assertTrue(RecordingUpstream.await(() -> proxy.records().size() >= 2, WAIT));
        List<AuditRecord> records = proxy.records();
        assertEquals(2, records.size(), "one record per request, no loop: " + records);
        for (AuditRecord record : records) {
            assertEquals("deny", record.decision());
            assertEquals(ProxyReasons.SELF_CONNECTION, record.reason());
        }
    }
}
