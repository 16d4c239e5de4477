package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One exchange with an approved endpoint, without sockets: a request body is read exactly as the server will read it
 * (UTF-8, nothing else the server could decode it as) or refused before anything is dialled.
 */
@ExtendWith(NettyLeakGuard.class)
class McpExchangeTest {
    static final Target MCP = new Target("mcp.test", HostKind.DNS, 8080);
    static final String CALL =
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{}}}";

    private final McpGate gate = McpGate.of(new McpPolicy(List.of(new McpServer(
            "docs",
            Optional.of(URI.create("http://mcp.test:8080/mcp")),
            List.of(),
            Map.of(),
            new NameFilter(List.of("search"), List.of()),
            NameFilter.none(),
            NameFilter.none(),
            false,
            false))));

    /** Content-Types a server reads as UTF-8, whatever parser it uses. */
    static Stream<String> utf8Types() {
        return Stream.of(
                "application/json",
                "application/json; charset=utf-8",
                "application/json;charset=UTF-8",
                "Application/JSON; CHARSET=Utf-8",
                "application/json; charset=\"utf-8\"",
                "application/json; charset=\"UTF-8\"",
                "application/json; charset=utf8",
                "application/json; profile=x;  charset=utf-8 ;");
    }

    /**
     * Content-Types a server could decode the body by as something other than UTF-8: another charset (the TypeScript
     * SDK server hands it to iconv-lite, which reads UTF-7), one named twice, hidden where a splitter that ignores
     * quotes finds it, or a parameter list that is not well-formed.
     */
    static Stream<String> otherTypes() {
        return Stream.of(
                "application/json; charset=utf-7",
                "application/json; charset=UTF-7",
                "application/json; charset=\"utf-7\"",
                "application/json; charset=utf7-imap",
                "application/json; charset=unicode-1-1-utf-7",
                "application/json; charset=utf-16",
                "application/json; charset=utf-16le",
                "application/json; charset=UTF-16BE",
                "application/json; charset=utf-32",
                "application/json; charset=latin1",
                "application/json; charset=iso-8859-1",
                "application/json; charset=us-ascii",
                "application/json; charset=IBM037",
                "application/json; charset=ebcdic-cp-us",
                "application/json; charset=no-such-charset",
                "application/json; charset=\"utf-8 \"",
                // RFC 9110 reads utf-8, a reader that does not undo escapes reads "utf\-8".
                "application/json; charset=\"utf\\-8\"",
                "application/json; charset=utf-8; charset=utf-7",
                "application/json; charset=utf-8; CHARSET=utf-8",
                "application/json; x=\"a;charset=utf-7\"",
                "application/json; x=\"charset=utf-7\"; charset=utf-8",
                "application/json; charset",
                "application/json; charset=",
                "application/json; charset=\"utf-8",
                "application/json; charset=utf-8 x",
                "application/json; charset = utf-8",
                "application/json, text/plain; charset=utf-8",
                "application/json; x=\"a;charset=utf-7");
    }

    private static HttpRequest post(String... contentTypes) {
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "http://mcp.test:8080/mcp");
        HttpUtil.setContentLength(request, CALL.length());
        for (String type : contentTypes) {
            request.headers().add("Content-Type", type);
        }
        return request;
    }

    private McpExchange start(HttpRequest request) {
        return McpExchange.start(gate, request, "http", MCP, "/mcp");
    }

    private static McpExchange.Step offer(McpExchange ex, byte[] body) {
        return ex.offer(new DefaultLastHttpContent(Unpooled.wrappedBuffer(body)), true);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("utf8Types")
    void aUtf8BodyGoesOn(String type) {
        HttpRequest head = post(type);
        McpExchange ex = start(head);

        assertFalse(ex.refusedFromHead(head, false));
        assertEquals(McpExchange.Step.FORWARD, offer(ex, CALL.getBytes(StandardCharsets.UTF_8)));
        HttpContent body = ex.takeBody();
        assertEquals(CALL, body.content().toString(StandardCharsets.UTF_8));
        body.release();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("otherTypes")
    void anyOtherReadingIsRefusedFromTheHead(String type) {
        HttpRequest head = post(type);
        McpExchange ex = start(head);

        assertTrue(ex.refusedFromHead(head, false));
        assertEquals(McpErrors.REASON_CHARSET_REFUSED, ex.refusalReason());
        assertEquals("mcp.servers[docs]", ex.refusalRule());
        FullHttpResponse r = ex.refusal(ByteBufAllocator.DEFAULT, false);
        try {
            assertEquals(415, r.status().code());
            assertEquals(McpErrors.REASON_CHARSET_REFUSED, r.headers().get("X-Agentjail-Reason"));
            String body = r.content().toString(StandardCharsets.UTF_8);
            assertTrue(body.contains("\"code\":" + McpErrors.UNINSPECTABLE), body);
        } finally {
            r.release();
        }
        assertEquals("docs", ex.details().server());
    }

    @Test
    void aBodyWithoutContentTypeGoesOn() {
        HttpRequest head = post();
        McpExchange ex = start(head);

        assertFalse(ex.refusedFromHead(head, false));
        assertEquals(McpExchange.Step.FORWARD, offer(ex, CALL.getBytes(StandardCharsets.UTF_8)));
        ex.takeBody().release();
    }

    @Test
    void twoContentTypeHeadersAreRefused() {
        HttpRequest head = post("application/json", "application/json; charset=utf-7");
        McpExchange ex = start(head);

        assertTrue(ex.refusedFromHead(head, false));
        assertEquals(McpErrors.REASON_CHARSET_REFUSED, ex.refusalReason());
    }

    /** A BOM, which servers strip (iconv-lite, TextDecoder) and the strict parser does not: refused, never passed. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("utf8Types")
    void aBodyStartingWithAByteOrderMarkIsRefused(String type) {
        HttpRequest head = post(type);
        McpExchange ex = start(head);
        assertFalse(ex.refusedFromHead(head, false));
        byte[] call = CALL.getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[call.length + 3];
        body[0] = (byte) 0xef;
        body[1] = (byte) 0xbb;
        body[2] = (byte) 0xbf;
        System.arraycopy(call, 0, body, 3, call.length);

        assertEquals(McpExchange.Step.REFUSE, offer(ex, body));
        assertEquals(McpErrors.REASON_PARSE_ERROR, ex.refusalReason());
        assertEquals(400, ex.refusalStatus().code());
        assertTrue(ex.refusalDetail().contains("byte order mark"), ex.refusalDetail());
        assertEquals(null, ex.takeBody());
    }
}
