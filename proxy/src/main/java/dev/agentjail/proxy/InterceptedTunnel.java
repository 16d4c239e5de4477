package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;

/**
 * Sits right behind the TLS handler of an intercepted tunnel: counts the plaintext both ways, turns
 * a failed client handshake (not TLS at all, a pinned certificate, an SNI naming another host) into a
 * closed connection with a record, and writes the tunnel's {@code tunnel-close} record when it ends.
 */
final class InterceptedTunnel extends ChannelDuplexHandler {
    static final String NAME = "intercepted-tunnel";

    private final Exchange connect;
    private final ProxyRuntime runtime;
    private final String client;
    private boolean handshaken;
    private boolean recorded;
    private String failureReason;
    private String failureDetail;

    InterceptedTunnel(Exchange connect, ProxyRuntime runtime, String client) {
        this.connect = connect;
        this.runtime = runtime;
        this.client = client;
    }

    /** Called from the certificate lookup: the ClientHello's SNI names another host. */
    void sniMismatch(String sni) {
        failureReason = ProxyReasons.SNI_MISMATCH;
        failureDetail = "TLS server name does not match the CONNECT host " + connect.target.host();
    }

    /** Called by the ClientHello check in front of the TLS handler, which then closes the connection. */
    void refused(String reason, String detail) {
        if (failureReason == null) {
            failureReason = reason;
            failureDetail = detail;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b) {
            connect.bytesOut += b.readableBytes();
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf b) {
            connect.bytesIn += b.readableBytes();
        }
        ctx.write(msg, promise);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                handshaken = true;
            } else {
                handshakeFailed(ctx, done.cause());
                return;
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!handshaken) {
            handshakeFailed(ctx, cause);
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    private void handshakeFailed(ChannelHandlerContext ctx, Throwable cause) {
        if (failureReason == null) {
            failureReason = ProxyReasons.CLIENT_TLS_FAILED;
            Throwable root = cause;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            failureDetail = "client TLS handshake failed: " + root.getMessage();
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        record();
        ctx.fireChannelInactive();
    }

    private void record() {
        if (recorded) {
            return;
        }
        recorded = true;
        AuditRecord.Builder b =
                connect.record(runtime.session(), client, System.nanoTime()).kind(AuditRecord.KIND_TUNNEL_CLOSE);
        if (failureReason != null) {
            b.decision(
                            failureReason.equals(ProxyReasons.SNI_MISMATCH)
                                            || failureReason.equals(ProxyReasons.TUNNEL_TLS_UNREADABLE)
                                    ? AuditRecord.DENY
                                    : AuditRecord.ERROR)
                    .reason(failureReason)
                    .error(failureDetail);
        } else {
            b.decision(AuditRecord.ALLOW).reason(connect.allowReason);
        }
        try {
            runtime.audit().append(b.build());
        } catch (AuditUnavailableException e) {
            // The sink reports itself unhealthy; new requests are refused until it recovers.
        }
    }
}
