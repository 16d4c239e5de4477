package dev.agentjail.proxy.mcp.host;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/** The bridge's HTTP answers: JSON bodies, empty statuses, and event-stream heads and events. */
final class BridgeResponses {
    static final String SESSION_HEADER = "Mcp-Session-Id";

    private static final byte[] EVENT_START = "event: message\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private BridgeResponses() {}

    static FullHttpResponse json(ByteBufAllocator alloc, HttpResponseStatus status, byte[] body, String session) {
        FullHttpResponse r = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, status, alloc.buffer(body.length).writeBytes(body));
        r.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        if (session != null) {
            r.headers().set(SESSION_HEADER, session);
        }
        return r;
    }

    static FullHttpResponse empty(HttpResponseStatus status) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        return r;
    }

    /** The head of an event stream; its events follow as chunks. */
    static HttpResponse streamHead(String session) {
        HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        r.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE)
                .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        if (session != null) {
            r.headers().set(SESSION_HEADER, session);
        }
        return r;
    }

    /** One {@code message} event; {@code json} is compact JSON, so it is one line. */
    static HttpContent event(ByteBufAllocator alloc, byte[] json) {
        ByteBuf buf = alloc.buffer(EVENT_START.length + json.length + EVENT_END.length);
        buf.writeBytes(EVENT_START).writeBytes(json).writeBytes(EVENT_END);
        return new DefaultHttpContent(buf);
    }
}
