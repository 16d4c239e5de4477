package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * From an attack session: a Go MCP server decodes params with encoding/json, which maps {@code NAME} (or {@code Name})
 * onto the {@code json:"name"} field too, the last one winning, so {@code {"name":"search","NAME":"delete_repo"}}
 * would call the denied tool. The gate refuses a message whose member names fold to the same name or to one of the
 * protocol's (McpNames).
 */
@ExtendWith(NettyLeakGuard.class)
class AttackMcpParamsCaseTest {
    private RecordingUpstream upstream;
    private McpProxy proxy;

    @BeforeEach
    void start() throws Exception {
        upstream = RecordingUpstream.start(r -> McpProxy.RESULT);
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
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"NAME\":\"delete_repo\",\"arguments\":{}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"Name\":\"delete_repo\",\"arguments\":{}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"Name\":\"delete_repo\",\"arguments\":{}}}",
                // held today (controls): an escaped duplicate, a duplicate arguments
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"n\\u0061me\":\"delete_repo\"}}",
            })
    void aSecondNameInAnotherCaseIsRefused(String body) throws Exception {
        String authority = "mcp.test:" + upstream.port();
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        RawResponse r;
        try (RawClient c = RawClient.connect(proxy.address)) {
            byte[] head = ("POST http://" + authority + "/mcp HTTP/1.1\r\nHost: " + authority
                            + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
                            + "\r\nContent-Length: " + b.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            byte[] all = java.util.Arrays.copyOf(head, head.length + b.length);
            System.arraycopy(b, 0, all, head.length, b.length);
            c.send(all);
            r = c.readResponse(McpProxy.WAIT);
        }
        assertEquals(
                0,
                upstream.requests().size(),
                "status " + r.status() + " " + r.body() + "; the Go server reads name=delete_repo from "
                        + upstream.requests());
        assertTrue(r.status() >= 200);
    }
}
