package dev.agentjail.proxy.mcp.host;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.security.MessageDigest;

/**
 * First handler of a bridge connection: the proxy opens every connection with the bridge's random token, so nothing
 * else that can reach the socket file (another program of the same user, a jail given a bind of the host's temporary
 * directory) can speak to a host-side server past the proxy's inspection. Removes itself once the token matched.
 */
final class TokenGate extends ChannelInboundHandlerAdapter {
    static final String NAME = "mcp-host-token";

    private final byte[] token;
    private final byte[] seen;
    private int have;

    TokenGate(byte[] token) {
        this.token = token;
        this.seen = new byte[token.length];
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        int n = Math.min(in.readableBytes(), token.length - have);
        in.readBytes(seen, have, n);
        have += n;
        if (have < token.length) {
            in.release();
            return;
        }
        if (!MessageDigest.isEqual(seen, token)) {
            in.release();
            ctx.close();
            return;
        }
        ctx.pipeline().remove(this);
        if (in.isReadable()) {
            ctx.fireChannelRead(in);
        } else {
            in.release();
        }
    }
}
