package dev.agentjail.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;

/**
 * Copies bytes from this channel to its peer with backpressure (reading pauses while the peer is not
 * writable) and closes the peer, after flushing, when this side closes.
 */
final class TunnelRelay extends ChannelInboundHandlerAdapter {
    static final String NAME = "tunnel-relay";

    private final Channel peer;
    private final TunnelSwitch.Tunnel tunnel;
    private final boolean fromClient;

    TunnelRelay(Channel peer, TunnelSwitch.Tunnel tunnel, boolean fromClient) {
        this.peer = peer;
        this.tunnel = tunnel;
        this.fromClient = fromClient;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf buf)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (fromClient) {
            tunnel.bytesOut += buf.readableBytes();
        } else {
            tunnel.bytesIn += buf.readableBytes();
        }
        peer.write(buf, peer.voidPromise());
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
        tunnel.closed();
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
        ctx.close();
    }
}
