package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code network.resolve} with ports: {@code host:port: addr:port} sends the named host's connections to that port to
 * a gateway on another port (curl's --connect-to), while the same host on another port is not pinned there.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyResolvePortTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aPinWithAPortSendsThatHostAndPortToTheGatewaysPort() throws Exception {
        try (RecordingUpstream gateway = RecordingUpstream.start();
                ProxyFixture proxy = ProxyFixture.start("""
                        version: 1
                        network:
                          allow: [api.test:80, api.test:8080, other.test:80]
                          resolve: {"api.test:80": "127.0.0.1:%d", other.test: "127.0.0.1:%d"}
                        """.formatted(gateway.port(), gateway.port()))) {
            RawResponse pinned = get(proxy, "api.test");
            assertEquals(200, pinned.status(), pinned::toString);
            RawResponse anyPort = get(proxy, "other.test");
            assertEquals(200, anyPort.status(), anyPort::toString);
            assertEquals(2, gateway.requests().size(), "both reached the gateway's port");
            assertEquals(
                    java.util.List.of("api.test"),
                    gateway.requests().get(0).headers("Host"),
                    "the request still names its host");

            // api.test:8080 has no pin of its own: it is looked up, and the name does not resolve here.
            RawResponse unpinned = get(proxy, "api.test:8080");
            assertEquals(502, unpinned.status(), unpinned::toString);
            assertEquals(2, gateway.requests().size());
        }
    }

    private static RawResponse get(ProxyFixture proxy, String authority) throws Exception {
        try (RawClient client = RawClient.connect(proxy.address())) {
            client.send(
                    "GET http://" + authority + "/x HTTP/1.1\r\nHost: " + authority + "\r\nConnection: close\r\n\r\n");
            return client.readResponse(WAIT);
        }
    }
}
