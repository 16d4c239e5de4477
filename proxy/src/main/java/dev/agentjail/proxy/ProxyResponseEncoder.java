package dev.agentjail.proxy;

import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;

/**
 * Encodes responses to the client; knows when the response answers a HEAD request so it never
 * writes a body (or a chunk terminator) for one.
 */
final class ProxyResponseEncoder extends HttpResponseEncoder {
    static final String NAME = "encoder";

    private boolean head;

    /** Set before writing a response head: whether that response answers a HEAD request. */
    void answeringHead(boolean head) {
        this.head = head;
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpResponse msg) {
        return head || super.isContentAlwaysEmpty(msg);
    }
}
