package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Attack: pipelined requests, informational answers and refusals on one client connection. */
@ExtendWith(NettyLeakGuard.class)
class AttackPipelineTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static String call(String tool) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool + "\"}}";
    }

    private static String post(String authority, String path, String body, String extra) {
        return "POST http://" + authority + path + " HTTP/1.1\r\nHost: " + authority
                + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" + extra
                + "Content-Length: " + body.length() + "\r\n\r\n" + body;
    }

    private static String get(String authority, String path) {
        return "GET http://" + authority + path + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
    }

    /** A refused MCP call, then an allowed GET, then an MCP call to another host, then a GET: one write. */
    @Test
    void refusedThenAllowedInOneWrite() throws Exception {
        try (RecordingUpstream upstream = RecordingUpstream.start(McpProxy::answer);
                McpProxy proxy = new McpProxy(upstream.port())) {
            String mcp = "mcp.test:" + upstream.port();
            String other = "other.test:" + upstream.port();
            String all = post(mcp, "/mcp", call("delete_repo"), "")
                    + get(other, "/a")
                    + post(other, "/rpc", call("search"), "")
                    + get(other, "/b");
            try (RawClient c = RawClient.connect(proxy.address)) {
                c.send(all);
                List<RawResponse> rs = c.readResponses(4, WAIT);
                assertTrue(rs.size() >= 3, c.received());
                assertEquals(200, rs.get(0).status());
                assertTrue(rs.get(0).body().contains("-32001"), rs.get(0).body());
                assertEquals(200, rs.get(1).status());
                assertEquals(403, rs.get(2).status());
            }
            RecordingUpstream.await(() -> false, Duration.ofMillis(300));
            for (var r : upstream.requests()) {
                assertFalse(r.body().contains("tools/call"), "MCP reached the upstream: " + r);
            }
        }
    }

    /** HEAD answered with 103 Early Hints and then its 200: the next request on the connection must still work. */
    @Test
    void headAfterEarlyHintsDoesNotDesync() throws Exception {
        RecordingUpstream.Responder responder = r -> r.requestLine().startsWith("HEAD ")
                ? "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                        + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\n"
                : RecordingUpstream.OK;
        try (RecordingUpstream upstream = RecordingUpstream.start(responder);
                McpProxy proxy = new McpProxy(upstream.port())) {
            String other = "other.test:" + upstream.port();
            try (RawClient c = RawClient.connect(proxy.address)) {
                c.send("HEAD http://" + other + "/h HTTP/1.1\r\nHost: " + other + "\r\n\r\n");
                String first = c.readUntil("\r\n\r\n", WAIT);
                assertTrue(first.startsWith("HTTP/1.1 200"), first);
                c.send(get(other, "/next"));
                String rest = c.readUntil(RecordingUpstream.OK_BODY, WAIT);
                assertTrue(
                        rest.contains(RecordingUpstream.OK_BODY), "no answer to the request after the HEAD: " + rest);
            }
            assertEquals(2, proxy.records().size(), "records: " + proxy.records());
        }
    }

    /** 100 Continue from the upstream, then a final response, on an allowed POST with Expect: 100-continue. */
    @Test
    void expectContinueTwiceIsNotRelayedAsAFinalAnswer() throws Exception {
        RecordingUpstream.Responder responder = r -> "HTTP/1.1 100 Continue\r\n\r\n" + RecordingUpstream.OK;
        try (RecordingUpstream upstream = RecordingUpstream.start(responder);
                McpProxy proxy = new McpProxy(upstream.port())) {
            String other = "other.test:" + upstream.port();
            try (RawClient c = RawClient.connect(proxy.address)) {
                c.send("POST http://" + other + "/u HTTP/1.1\r\nHost: " + other
                        + "\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
                String cont = c.readUntil("\r\n\r\n", WAIT);
                assertTrue(cont.startsWith("HTTP/1.1 100"), cont);
                c.send("hello");
                c.send(get(other, "/next"));
                String all = c.readUntil(RecordingUpstream.OK_BODY + "HTTP", WAIT);
                all = c.readUntil("zzzz", Duration.ofSeconds(2));
                int finals = all.split("HTTP/1.1 200", -1).length - 1;
                int infos = all.split("HTTP/1.1 100", -1).length - 1;
                assertEquals(2, finals, all);
                assertEquals(1, infos, all);
            }
        }
    }

    /** A large followed body (not MCP), then a short MCP call and a UTF-16 one, pipelined in one write. */
    @Test
    void followedBodyThenMcpCallsPipelined() throws Exception {
        try (RecordingUpstream upstream = RecordingUpstream.start();
                McpProxy proxy = new McpProxy(upstream.port())) {
            String other = "other.test:" + upstream.port();
            String big = "{\"pad\":\"" + "q".repeat(3 * McpExchange.SNIFF_BYTES) + "\"}";
            byte[] utf16 = ("\uFEFF" + call("x")).getBytes(java.nio.charset.StandardCharsets.UTF_16LE);
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            out.writeBytes(post(other, "/a", big, "").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.writeBytes(post(other, "/b", call("y"), "").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.writeBytes(("POST http://" + other + "/c HTTP/1.1\r\nHost: " + other
                            + "\r\nContent-Type: application/json\r\nContent-Length: " + utf16.length + "\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.writeBytes(utf16);
            try (RawClient c = RawClient.connect(proxy.address)) {
                c.send(out.toByteArray());
                List<RawResponse> rs = c.readResponses(3, WAIT);
                assertEquals(3, rs.size(), c.received());
                assertEquals(200, rs.get(0).status());
                assertEquals(403, rs.get(1).status());
                assertEquals(403, rs.get(2).status());
            }
            assertEquals(1, upstream.requests().size());
        }
    }
}
