package dev.agentjail.proxy;

import dev.agentjail.proxy.http.MalformedRequest;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Bounds how long a client may take to send a request head (slowloris) and how long its body may
 * stall; when a bound is hit it passes a {@link MalformedRequest} with status 408 downstream, which
 * answers, records and closes.
 */
final class ClientTimeouts extends ChannelInboundHandlerAdapter {
    private final long headerMillis;
    private final long bodyMillis;

    private ScheduledFuture<?> headerTimer;
    private ScheduledFuture<?> bodyTimer;
    private boolean fired;

    ClientTimeouts(Timeouts timeouts) {
        this.headerMillis = timeouts.header().toMillis();
        this.bodyMillis = timeouts.body().toMillis();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == StrictRequestDecoder.HEAD_STARTED) {
            cancel();
            headerTimer = ctx.executor()
                    .schedule(() -> fire(ctx, ProxyReasons.HEADER_TIMEOUT, "request head not complete in time"),
                            headerMillis,
                            TimeUnit.MILLISECONDS);
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request) {
            cancel();
            if (!request.method().equals(HttpMethod.CONNECT)) {
                armBody(ctx);
            }
        } else if (msg instanceof LastHttpContent) {
            cancel();
        } else if (msg instanceof HttpContent) {
            armBody(ctx);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancel();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancel();
        ctx.fireChannelInactive();
    }

    private void armBody(ChannelHandlerContext ctx) {
        if (bodyTimer != null) {
            bodyTimer.cancel(false);
        }
        bodyTimer = ctx.executor()
                .schedule(() -> fire(ctx, ProxyReasons.BODY_TIMEOUT, "request body stalled"), bodyMillis, TimeUnit.MILLISECONDS);
    }

    private void fire(ChannelHandlerContext ctx, String reason, String detail) {
        if (fired || !ctx.channel().isActive()) {
            return;
        }
        fired = true;
        cancel();
        ctx.fireChannelRead(new MalformedRequest(HttpResponseStatus.REQUEST_TIMEOUT, reason, detail, null));
    }

    private void cancel() {
        if (headerTimer != null) {
            headerTimer.cancel(false);
            headerTimer = null;
        }
        if (bodyTimer != null) {
            bodyTimer.cancel(false);
            bodyTimer = null;
        }
    }
}
