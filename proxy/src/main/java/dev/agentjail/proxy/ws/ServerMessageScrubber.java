package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.inspect.ResponseScrubber;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Swaps the real value of a credential of this host back to its placeholder in every message the upstream sends, text,
 * binary and control alike, after inflating: the jail never reads a value the proxy injected. Lengths stay the same.
 */
public final class ServerMessageScrubber extends ChannelInboundHandlerAdapter {
    public static final String NAME = "ws-server-scrubber";

    private final ResponseScrubber scrubber;

    public ServerMessageScrubber(ResponseScrubber scrubber) {
        this.scrubber = scrubber;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof WsMessage m) {
            // Each message is whole here, so a value split across fragments or TCP segments is found.
            var scrubbed = scrubber.scrub(m.content().retain(), true, ctx.alloc());
            WsMessage out = m.withPayload(scrubbed, false);
            m.release();
            ctx.fireChannelRead(out);
            return;
        }
        ctx.fireChannelRead(msg);
    }
}
