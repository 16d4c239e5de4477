package dev.agentjail.proxy;

import dev.agentjail.proxy.mcp.McpExchange;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * The stage that decides MCP requests on their (already redacted) bodies before anything is dialled: the body of an
 * exchange whose {@link McpExchange} collects is held here until the gate decides; then {@link
 * ExchangeSignal.McpReady} (the exchange handler dials and sends what was collected) or {@link
 * ExchangeSignal.McpRefused} goes on. A body to another destination that was decided on its start streams on, but is
 * followed to its end, and its latest part is kept back until the next one comes: when the rest turns out to be MCP,
 * the refusal goes on and the part kept back, with the end of the body, never reaches the upstream.
 */
final class McpRequestGate extends ChannelInboundHandlerAdapter {
    static final String NAME = "mcp-request-gate";

    /** The exchange whose body is collected, or followed, here; null when none is. */
    private Exchange gated;
    /** Following the rest of a body decided on its start. */
    private boolean following;
    /** The latest part of a followed body, kept back until the next one. */
    private HttpContent keptBack;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof RequestIntake.Outcome outcome) {
            reset();
            Exchange ex = outcome.exchange();
            if (outcome instanceof RequestIntake.Admitted && ex.mcp != null && ex.mcp.collecting()) {
                gated = ex;
            }
        } else if (msg instanceof ExchangeSignal.BodyRefused refused && refused.exchange() == gated) {
            reset();
        } else if (msg instanceof HttpContent content && gated != null) {
            if (gated.discarding()) {
                reset();
            } else {
                body(ctx, content);
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    private void body(ChannelHandlerContext ctx, HttpContent content) {
        Exchange ex = gated;
        McpExchange m = ex.mcp;
        boolean last = content instanceof LastHttpContent;
        if (last) {
            ex.requestComplete = true;
        }
        if (following) {
            follow(ctx, ex, content, last);
            return;
        }
        switch (m.offer(content, last)) {
            case MORE -> {}
            case FORWARD -> {
                following = !last && m.followsTail();
                if (!following) {
                    gated = null;
                }
                ctx.fireChannelRead(new ExchangeSignal.McpReady(ex));
            }
            case REFUSE -> {
                gated = null;
                ctx.fireChannelRead(new ExchangeSignal.McpRefused(ex));
            }
        }
    }

    private void follow(ChannelHandlerContext ctx, Exchange ex, HttpContent content, boolean last) {
        if (!ex.mcp.followTail(content.content())) {
            content.release();
            reset();
            ctx.fireChannelRead(new ExchangeSignal.McpRefused(ex));
            return;
        }
        HttpContent before = keptBack;
        keptBack = last ? null : content;
        if (before != null) {
            ctx.fireChannelRead(before);
        }
        if (last) {
            gated = null;
            following = false;
            ctx.fireChannelRead(content);
        }
    }

    private void reset() {
        gated = null;
        following = false;
        if (keptBack != null) {
            keptBack.release();
            keptBack = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        reset();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        reset();
    }
}
