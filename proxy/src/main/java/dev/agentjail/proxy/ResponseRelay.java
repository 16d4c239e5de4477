package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.mcp.McpAnswer;
import dev.agentjail.proxy.ws.Handshake;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * Where an upstream connection hands the response of the exchange in flight, as the response stages left it: its head
 * and body go to the client, a refusal or failure ends the exchange, an accepted WebSocket upgrade turns both
 * connections into a message relay. Lives on the connection's event loop.
 */
final class ResponseRelay {
    private final ClientConnection conn;

    ResponseRelay(ClientConnection conn) {
        this.conn = conn;
    }

    // ---- callbacks from the upstream connection (same event loop) ----

    /** The response head, as the response stages left it. */
    void onResponseHead(HttpResponse response, boolean head) {
        Exchange ex = conn.current;
        if (ex.mcp != null && ex.mcp.answer().responseMode() == McpAnswer.ResponseMode.SSE) {
            // A legacy session puts refusals of its POSTs (other connections) on this stream.
            ex.mcp.answer().streamTo(conn.ctx.channel().eventLoop(), event -> addEvent(ex, event));
        }
        conn.writeResponseHead(ex, response, head);
    }

    /** Adds one complete event to the event stream of {@code ex}, between the upstream's events; on this loop. */
    void addEvent(Exchange ex, byte[] event) {
        if (conn.current != ex || conn.closing || !ex.responseStarted) {
            return;
        }
        ex.bytesIn += event.length;
        conn.ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event)));
    }

    /**
     * The upstream accepted a WebSocket upgrade: unless its 101 answers something that was not asked (502), the
     * exchange is recorded (decided like any request, status 101) and both connections become an inspecting message
     * relay whose close writes a {@code tunnel-close} record.
     */
    void onUpgraded(HttpResponse response) {
        Exchange ex = conn.current;
        Handshake.Outcome handshake = Handshake.check(ex.outbound.headers(), response.headers());
        if (handshake instanceof Handshake.Refused r) {
            conn.endInFlight(
                    ex,
                    AuditRecord.DENY,
                    HttpResponseStatus.BAD_GATEWAY,
                    ProxyReasons.WEBSOCKET_HANDSHAKE_REFUSED,
                    r.detail());
            return;
        }
        ex.status = 101;
        ex.responseStarted = true;
        if (!recordedAllowed(ex)) {
            conn.current = null;
            conn.closeNow();
            return;
        }
        UpstreamConnection up = conn.upstream;
        conn.upstream = null;
        conn.current = null;
        conn.closing = true;
        TunnelSwitch.upgrade(
                conn.ctx,
                up,
                ex,
                conn.runtime,
                conn.clientAddress(),
                response,
                ((Handshake.Accepted) handshake).extensions());
    }

    /** A response body part, as the response stages left it: counted as sent to the client. */
    void onResponseContent(HttpContent content) {
        Exchange ex = conn.current;
        if (ex.mcp != null) {
            recordStreamMessages(ex);
        }
        ex.bytesIn += Exchange.size(content);
        if (content instanceof LastHttpContent last) {
            conn.completeExchange(ex, last);
            return;
        }
        conn.ctx.write(content);
    }

    /** A response stage refused the response: nothing more of it reaches the client. */
    void onResponseRefused(ExchangeSignal.ResponseRefused r) {
        Exchange ex = r.exchange();
        if (ex != conn.current) {
            return;
        }
        if (ex.mcp != null) {
            recordStreamMessages(ex);
        }
        conn.endInFlight(ex, r.decision(), r.status(), r.reason(), r.detail());
    }

    /** Records the MCP messages of a response that have records of their own (dropped, or filtered on a stream). */
    void recordStreamMessages(Exchange ex) {
        for (McpAnswer.StreamMessage message : ex.mcp.answer().takeStreamMessages()) {
            conn.recordQuietly(conn.recordOf(ex)
                    .kind(AuditRecord.KIND_MCP_MESSAGE)
                    .decision(message.decision())
                    .reason(message.reason())
                    .mcp(message.details())
                    .build());
        }
    }

    void onUpstreamReadComplete() {
        conn.ctx.flush();
        if (conn.upstream != null && !conn.ctx.channel().isWritable()) {
            conn.upstream.pauseReading();
        }
    }

    /** The upstream failed or closed before the response completed. */
    void onUpstreamFailure(HttpResponseStatus status, String reason, String detail) {
        Exchange ex = conn.current;
        conn.upstream = null;
        if (ex != null) {
            conn.endInFlight(ex, AuditRecord.ERROR, status, reason, detail);
        }
    }

    /** Called by the upstream when it can take more request body again. */
    void onUpstreamWritable() {
        if (conn.current != null && !conn.current.requestComplete && !conn.closing) {
            conn.ctx.channel().config().setAutoRead(true);
        }
    }

    /**
     * A CONNECT's upstream is connected: the exchange is recorded (on disk before the client sees the 200, so even a
     * killed proxy leaves this record), and the client connection becomes an intercepted or a relayed tunnel.
     */
    void openTunnel(Exchange ex, Channel upstream) {
        ex.status = 200;
        ex.intercepted = conn.runtime.intercepts(ex.target);
        if (!recordedAllowed(ex)) {
            upstream.close();
            ex.status = 0;
            conn.refuseAuditUnavailable(ex);
            return;
        }
        if (ex.intercepted) {
            InterceptSwitch.establish(conn.ctx, upstream, ex, conn.runtime, conn.clientAddress());
        } else {
            TunnelSwitch.establish(conn.ctx, upstream, ex, conn.runtime, conn.clientAddress());
        }
        conn.current = null;
        conn.closing = true;
    }

    /** Writes the allowed exchange's record before the client sees its answer; false when the log cannot be written. */
    private boolean recordedAllowed(Exchange ex) {
        try {
            conn.runtime
                    .audit()
                    .append(conn.recordOf(ex)
                            .decision(AuditRecord.ALLOW)
                            .reason(ex.allowReason)
                            .build());
            return true;
        } catch (AuditUnavailableException e) {
            return false;
        }
    }
}
