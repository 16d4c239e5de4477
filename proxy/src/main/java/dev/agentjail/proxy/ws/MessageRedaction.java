package dev.agentjail.proxy.ws;

import dev.agentjail.policy.Target;
import dev.agentjail.proxy.inspect.Inspector;
import dev.agentjail.proxy.inspect.OutboundRequest;
import dev.agentjail.proxy.redact.Findings;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;

/**
 * Redacts one message payload exactly as the proxy redacts a request body to the same host (the policy's rules, known
 * values, placeholders, block or redact), by handing it to the {@link Inspector} as the whole body of a request of the
 * message's type: JSON for text (what LLM clients send), opaque bytes for binary and control payloads.
 */
public final class MessageRedaction {
    private final Inspector inspector;
    private final Target target;

    public MessageRedaction(Inspector inspector, Target target) {
        this.inspector = inspector;
        this.target = target;
    }

    /** What came of one payload: the bytes to send ({@code null} when the policy blocks them) and what was found. */
    public record Result(ByteBuf payload, List<Findings.Finding> findings) {
        public boolean blocked() {
            return payload == null;
        }
    }

    /** Redacts {@code payload} (taking it over); the result's payload is the caller's. */
    public Result redact(ByteBuf payload, boolean json, ByteBufAllocator alloc) {
        HttpHeaders headers = new DefaultHttpHeaders()
                .set(HttpHeaderNames.CONTENT_TYPE, json ? "application/json" : "application/octet-stream")
                .set(HttpHeaderNames.CONTENT_LENGTH, payload.readableBytes());
        OutboundRequest request = inspector.inspect(
                new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/", headers), target, "/", false);
        if (request.refused()) {
            payload.release();
            return new Result(null, request.findings());
        }
        HttpContent out = request.transform(new DefaultLastHttpContent(payload), alloc);
        if (out == null || request.refused()) {
            if (out != null) {
                out.release();
            }
            return new Result(null, request.findings());
        }
        return new Result(out.content(), request.findings());
    }
}
