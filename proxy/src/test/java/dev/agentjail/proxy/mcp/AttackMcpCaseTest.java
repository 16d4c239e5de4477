package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * From an attack session: Go's encoding/json, which Go MCP servers decode JSON-RPC with, matches member names without
 * case, Unicode simple folding included (U+017F for s, U+212A for k). Detection of MCP sent elsewhere folds names the
 * same way, so such a tools/call to a host that is not an approved endpoint is refused.
 */
@ExtendWith(NettyLeakGuard.class)
class AttackMcpCaseTest {
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
    @ValueSource(
            strings = {
                "{\"JSONRPC\":\"2.0\",\"ID\":1,\"METHOD\":\"tools/call\",\"PARAMS\":{\"name\":\"delete_repo\"}}",
                "{\"Jsonrpc\":\"2.0\",\"Id\":1,\"Method\":\"tools/call\",\"Params\":{\"name\":\"delete_repo\"}}",
                "{\"j\u017fonrpc\":\"2.0\",\"id\":1,\"Method\":\"tools/call\",\"params\":{\"name\":\"delete_repo\"}}",
                "[{\"JSONRPC\":\"2.0\",\"ID\":1,\"METHOD\":\"tools/call\",\"PARAMS\":{\"name\":\"delete_repo\"}}]",
                // control: the lower-case call is refused today
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete_repo\"}}",
            })
    void aCallWithNamesInAnotherCaseIsRefused(String body) throws Exception {
        String authority = "other.test:" + upstream.port();
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        try (RawClient c = RawClient.connect(proxy.address)) {
            byte[] head = ("POST http://" + authority + "/mcp HTTP/1.1\r\nHost: " + authority
                            + "\r\nContent-Type: application/json\r\nContent-Length: " + b.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            byte[] all = java.util.Arrays.copyOf(head, head.length + b.length);
            System.arraycopy(b, 0, all, head.length, b.length);
            c.send(all);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            assertEquals(403, r.status(), r.statusLine() + "; upstream got " + upstream.requests());
        }
        assertEquals(0, upstream.requests().size());
    }
}
