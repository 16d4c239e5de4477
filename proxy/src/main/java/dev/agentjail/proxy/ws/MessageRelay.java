package dev.agentjail.proxy.ws;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;

/**
 * Sends the messages one side's pipeline scanned on to the other side (whose encoders frame them), with backpressure,
 * and ends the connection: a violation gets the side at fault a close frame with its code and reason, the other side a
 * close frame of its own, and the ledger its record; an idle timeout or either side's close closes both.
 */
public final class MessageRelay extends ChannelInboundHandlerAdapter {
    public static final String NAME = "ws-relay";
    /** Sent to the side not at fault: the other one broke the connection. */
    static final int GOING_AWAY = 1001;
    /** Sent to the client when the upstream broke the protocol (the IANA registry's "Bad Gateway"). */
    static final int BAD_GATEWAY = 1014;

    private final Channel peer;
    private final WsLedger ledger;
    private final boolean fromClient;
    private boolean failed;

    public MessageRelay(Channel peer, WsLedger ledger, boolean fromClient) {
        this.peer = peer;
        this.ledger = ledger;
        this.fromClient = fromClient;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (failed || !(msg instanceof WsMessage m)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ledger.message(fromClient, m.content().readableBytes());
        peer.write(m, peer.voidPromise());
        if (!peer.isWritable()) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        peer.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        // This channel drained: its peer may read again.
        if (ctx.channel().isWritable()) {
            peer.config().setAutoRead(true);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        ledger.closed();
        if (peer.isActive()) {
            peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            ctx.close();
            peer.close();
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        WsViolation v = violation(cause);
        if (v == null || failed) {
            // I/O errors (reset by peer, TLS alerts): both ends go; the close writes the record.
            ctx.close();
            peer.close();
            return;
        }
        failed = true;
        ledger.failed(v, fromClient);
        ctx.channel().config().setAutoRead(false);
        // The side at fault learns why; the other side only that the connection ends.
        ctx.writeAndFlush(WsMessage.close(ctx.alloc(), v.code(), v.reason())).addListener(ChannelFutureListener.CLOSE);
        int other = fromClient ? GOING_AWAY : BAD_GATEWAY;
        String why = fromClient ? "" : v.reason();
        if (peer.isActive()) {
            peer.writeAndFlush(WsMessage.close(peer.alloc(), other, why)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private static WsViolation violation(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof WsViolation v) {
                return v;
            }
            if (!(t instanceof DecoderException)) {
                return null;
            }
        }
        return null;
    }
}
