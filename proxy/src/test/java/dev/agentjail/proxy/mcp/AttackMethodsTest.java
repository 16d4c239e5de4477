package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attack (low): MCP detection for unapproved hosts looks only at POST bodies (McpExchange.start: {@code post &&
 * hasBody}); a tools/call in the body of a PUT, PATCH, DELETE or GET with a body goes to the unapproved host
 * uninspected. Any JSON-RPC-over-HTTP receiver that does not dispatch on the method (a generic handler, an {@code
 * app.all} route, a relay) reads it. Also an event stream whose first field is not one of data/event/id/retry/: (the
 * WHATWG parser ignores unknown fields, so {@code x: 1} then {@code data: <call>} is one event with the call).
 */
@ExtendWith(NettyLeakGuard.class)
class AttackMethodsTest {
    private static final String CALL =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete_repo\"}}";

    private RecordingUpstream upstream;
    private McpProxy proxy;

    @BeforeEach
    void start() throws Exception {
        upstream = RecordingUpstream.start();
        proxy = new McpProxy(upstream.port());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"PUT", "PATCH", "DELETE", "GET", "OPTIONS"})
    void mcpInTheBodyOfAnotherMethodIsRefused(String method) throws Exception {
        assertRefused(method, "application/json", CALL);
    }

    @ParameterizedTest
    @ValueSource(strings = {"x: 1\n", "foo\n", "data\n", "Data: 1\n", "event : 1\n"})
    void anEventStreamStartingWithAnotherFieldIsRefused(String first) throws Exception {
        assertRefused("POST", "text/event-stream", first + "data: " + CALL + "\n\n");
    }

    private void assertRefused(String method, String type, String body) throws Exception {
        String authority = "other.test:" + upstream.port();
        try (RawClient c = RawClient.connect(proxy.address)) {
            c.send(method + " http://" + authority + "/rpc HTTP/1.1\r\nHost: " + authority + "\r\nContent-Type: " + type
                    + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            assertEquals(403, r.status(), method + " " + r.statusLine() + "; upstream got " + upstream.requests());
        }
        assertEquals(0, upstream.requests().size());
    }
}
