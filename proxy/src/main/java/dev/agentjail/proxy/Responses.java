package dev.agentjail.proxy;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/** Builds the proxy's own answers: a status, the machine-readable reason headers and a one-line body. */
public final class Responses {
    private Responses() {}

    /**
     * A refusal such as {@code 403}: {@value ProxyReasons#HEADER} carries the reason code, {@value
     * ProxyReasons#RULE_HEADER} the rule, and the body one human-readable line.
     */
    public static FullHttpResponse refusal(
            ByteBufAllocator alloc, HttpResponseStatus status, String reason, String rule, String line, boolean close) {
        byte[] body = ("agentjail: " + line + " (" + reason + ")\n").getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, status, alloc.buffer(body.length).writeBytes(body));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(ProxyReasons.HEADER, reason);
        if (rule != null && !rule.equals("-")) {
            response.headers().set(ProxyReasons.RULE_HEADER, sanitize(rule));
        }
        if (close) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        return response;
    }

    /** Keeps a header value to visible ASCII so no policy text can inject a header line. */
    private static String sanitize(String value) {
        StringBuilder sb = new StringBuilder(value.length());
        for (int i = 0; i < value.length() && sb.length() < 256; i++) {
            char c = value.charAt(i);
            sb.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return sb.toString();
    }
}
