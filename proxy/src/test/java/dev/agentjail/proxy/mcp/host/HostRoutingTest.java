package dev.agentjail.proxy.mcp.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.ProxyServer;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.StubResolver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The reserved names under {@value HostEndpoints#DOMAIN}: only a configured server's endpoint, as plain HTTP, is
 * routed (to the bridge, never resolved); a deny entry still wins; nothing is started by refused requests.
 */
@ExtendWith(NettyLeakGuard.class)
class HostRoutingTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private ProxyServer proxy;
    private InetSocketAddress address;
    private final StubResolver resolver = new StubResolver();

    @AfterEach
    void tearDown() {
        if (proxy != null) {
            proxy.close();
        }
    }

    private void start(NetworkPolicy network) throws Exception {
        // A server that is never started by these tests: every request here is refused before the bridge.
        McpServer docs = new McpServer(
                "docs",
                Optional.empty(),
                List.of("/nonexistent/mcp-server"),
                Map.of(),
                NameFilter.none(),
                NameFilter.none(),
                NameFilter.none(),
                false,
                false);
        proxy = new ProxyServer(new ProxyConfig(
                network,
                "test-session",
                new MemoryAuditSink(),
                resolver,
                HttpLimits.defaults(),
                Timeouts.defaults(),
                Clock.systemUTC(),
                1,
                null,
                Inspection.defaults(),
                new McpPolicy(List.of(docs)),
                Map.of()));
        address = proxy.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    private RawResponse send(String request) throws Exception {
        try (RawClient c = RawClient.connect(address)) {
            return c.send(request).readResponse(WAIT);
        }
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of(
                        "CONNECT docs.mcp.agentjail.internal:443 HTTP/1.1\r\nHost: docs.mcp.agentjail.internal:443\r\n\r\n",
                        HostErrors.REASON_UNKNOWN),
                Arguments.of(
                        "CONNECT docs.mcp.agentjail.internal:80 HTTP/1.1\r\nHost: docs.mcp.agentjail.internal:80\r\n\r\n",
                        HostErrors.REASON_UNKNOWN),
                Arguments.of(
                        "GET http://other.mcp.agentjail.internal/mcp HTTP/1.1\r\nHost: other.mcp.agentjail.internal\r\n\r\n",
                        HostErrors.REASON_UNKNOWN),
                Arguments.of(
                        "GET http://mcp.agentjail.internal/mcp HTTP/1.1\r\nHost: mcp.agentjail.internal\r\n\r\n",
                        HostErrors.REASON_UNKNOWN),
                Arguments.of(
                        "GET http://docs.mcp.agentjail.internal:8080/mcp HTTP/1.1\r\n"
                                + "Host: docs.mcp.agentjail.internal:8080\r\n\r\n",
                        HostErrors.REASON_UNKNOWN));
    }

    @ParameterizedTest
    @MethodSource("refused")
    void onlyAConfiguredServersPlainEndpointIsRouted(String request, String reason) throws Exception {
        start(NetworkPolicy.none());

        RawResponse r = send(request);

        assertEquals(403, r.status());
        assertEquals(reason, r.header("X-Agentjail-Reason"));
        assertEquals(List.of(), resolver.queries(), "a reserved name was resolved");
    }

    @Test
    void aDenyEntryCoveringTheReservedDomainWins() throws Exception {
        Policy policy = PolicyLoader.parse("""
                version: 1
                network:
                  allow: [example.com]
                  deny: ["*.agentjail.internal"]
                """, "deny.yaml");
        start(policy.network());

        RawResponse r = send("GET http://docs.mcp.agentjail.internal/mcp HTTP/1.1\r\n"
                + "Host: docs.mcp.agentjail.internal\r\n\r\n");

        assertEquals(403, r.status());
        assertEquals("denied-by-rule", r.header("X-Agentjail-Reason"));
    }

    @Test
    void anApprovedEndpointReachesTheBridgeWithoutAnyNetworkRule() throws Exception {
        start(NetworkPolicy.none());

        // Not MCP (a GET without a session): the bridge itself answers, so the route and the dial worked.
        RawResponse r = send("GET http://docs.mcp.agentjail.internal/mcp HTTP/1.1\r\n"
                + "Host: docs.mcp.agentjail.internal\r\nAccept: text/event-stream\r\n\r\n");

        assertEquals(400, r.status());
        assertTrue(r.header("X-Agentjail-Reason") == null, "refused by the proxy, not answered by the bridge");
        assertEquals(List.of(), resolver.queries());
    }
}
