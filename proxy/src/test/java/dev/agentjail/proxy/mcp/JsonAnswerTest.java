package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.json.Json;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A JSON answer is collected within its cap, its parts released, and filtered message by message. */
class JsonAnswerTest {
    private static final String RESULT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
    private static final String SAMPLING = "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"sampling/createMessage\"}";

    /** Drops server requests, keeps everything else as it is. */
    private static final SseFilter.Rewriter DROP_REQUESTS = m -> m.kind() == RpcMessage.Kind.REQUEST ? null : m.raw();

    private static JsonAnswer answer(String... parts) {
        JsonAnswer a = new JsonAnswer(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CREATED), 1024);
        for (String p : parts) {
            HttpContent c = new DefaultHttpContent(Unpooled.copiedBuffer(p, StandardCharsets.UTF_8));
            assertTrue(a.collect(c));
            assertEquals(0, c.refCnt());
        }
        return a;
    }

    @Test
    void anUnchangedAnswerIsItsOwnBytes() throws Exception {
        assertArrayEquals(
                utf8(RESULT),
                answer(RESULT.substring(0, 9), RESULT.substring(9)).filtered(DROP_REQUESTS));
    }

    @Test
    void aBatchLosesWhatTheRewriterDrops() throws Exception {
        byte[] out = answer("[" + SAMPLING + "," + RESULT + "]").filtered(DROP_REQUESTS);
        assertEquals("[" + RESULT + "]", new String(out, StandardCharsets.UTF_8));
    }

    @Test
    void onlyDroppedMessagesIsRefused() {
        for (String body : new String[] {SAMPLING, "[" + SAMPLING + "]"}) {
            JsonAnswer.Unfilterable e = assertThrows(
                    JsonAnswer.Unfilterable.class, () -> answer(body).filtered(DROP_REQUESTS));
            assertEquals(McpErrors.REASON_RESPONSE_REFUSED, e.reason());
        }
    }

    @Test
    void whatIsNotJsonRpcIsUninspectable() {
        for (String body : new String[] {"{\"tools\":[]}", "\uFEFF" + RESULT, RESULT + "x", "[1]"}) {
            JsonAnswer.Unfilterable e = assertThrows(
                    JsonAnswer.Unfilterable.class, () -> answer(body).filtered(DROP_REQUESTS), body);
            assertEquals(McpErrors.REASON_UNINSPECTABLE, e.reason());
        }
    }

    @Test
    void whitespaceIsNoMessage() throws Exception {
        assertEquals(0, answer(" \r\n").filtered(m -> Json.Obj.class.cast(null)).length);
        assertEquals(0, answer().filtered(DROP_REQUESTS).length);
    }

    @Test
    void pastTheCapIsRefusedAndReleased() {
        JsonAnswer a = new JsonAnswer(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK), 8);
        HttpContent c = new DefaultHttpContent(Unpooled.copiedBuffer(RESULT, StandardCharsets.UTF_8));
        assertFalse(a.collect(c));
        assertEquals(0, c.refCnt());
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
