package dev.agentjail.proxy;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;

/**
 * Frames a response for an HTTP/1.0 client (RFC 9112 sections 6.1 and 9.3): never chunked, since a 1.0
 * client would read the chunk lines as body, so such a body is delimited by closing the connection; and a
 * kept-alive connection says {@code Connection: keep-alive}, since a 1.0 client otherwise expects the close.
 */
final class Http10Framing {
    private Http10Framing() {}

    /**
     * Adapts {@code response} (its head not written yet) to {@code request}'s version; returns whether the
     * connection must close after it, which is {@code closeAfter} or a body that can only end with the close.
     */
    static boolean adapt(HttpRequest request, HttpResponse response, boolean closeAfter) {
        if (!request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
            return closeAfter;
        }
        if (response.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            response.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
            closeAfter = true;
        }
        if (!closeAfter) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        return closeAfter;
    }
}
