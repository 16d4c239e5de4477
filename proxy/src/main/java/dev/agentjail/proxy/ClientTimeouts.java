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
 * Owns the client connection's clocks: how long a request head may take (slowloris) and a body may
 * stall, where a bound hit passes a {@link MalformedRequest} with status 408 downstream, which
 * answers, records and closes; and how long a connection may sit idle between exchanges, after which
 * it is closed quietly.
 *
 * <p>Deadlines are plain numbers checked by one periodic task per connection, so a request costs no
 * timer scheduling on the hot path.
 */
final class ClientTimeouts extends ChannelInboundHandlerAdapter {
    /** Fired through the pipeline by the exchange handler when an exchange ends and none is in flight. */
    static final Object EXCHANGE_DONE = "agentjail.exchange-done";

    private static final long NONE = Long.MAX_VALUE;

    private final long headerNanos;
    private final long bodyNanos;
    private final long idleNanos;
    private final long tickMillis;

    private long headerDeadline = NONE;
    private long bodyDeadline = NONE;
    private long idleDeadline = NONE;
    private ScheduledFuture<?> ticker;
    private boolean fired;

    ClientTimeouts(Timeouts timeouts) {
        this.headerNanos = timeouts.header().toNanos();
        this.bodyNanos = timeouts.body().toNanos();
        this.idleNanos = timeouts.idle().toNanos();
        long shortest = Math.min(
                Math.min(timeouts.header().toMillis(), timeouts.body().toMillis()),
                timeouts.idle().toMillis());
        this.tickMillis = Math.max(10, Math.min(1000, shortest / 4));
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        idleDeadline = System.nanoTime() + idleNanos;
        ticker = ctx.executor().scheduleWithFixedDelay(() -> check(ctx), tickMillis, tickMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == StrictRequestDecoder.HEAD_STARTED) {
            headerDeadline = System.nanoTime() + headerNanos;
            bodyDeadline = NONE;
            idleDeadline = NONE;
        } else if (evt == EXCHANGE_DONE) {
            idleDeadline = System.nanoTime() + idleNanos;
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request) {
            headerDeadline = NONE;
            bodyDeadline = request.method().equals(HttpMethod.CONNECT) ? NONE : System.nanoTime() + bodyNanos;
        } else if (msg instanceof LastHttpContent) {
            bodyDeadline = NONE;
        } else if (msg instanceof HttpContent) {
            bodyDeadline = System.nanoTime() + bodyNanos;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stop();
        ctx.fireChannelInactive();
    }

    private void check(ChannelHandlerContext ctx) {
        long now = System.nanoTime();
        if (idleDeadline != NONE && now - idleDeadline > 0) {
            stop();
            ctx.close();
            return;
        }
        if (now - headerDeadline > 0 && headerDeadline != NONE) {
            fire(ctx, ProxyReasons.HEADER_TIMEOUT, "request head not complete in time");
        } else if (bodyDeadline != NONE && !ctx.channel().config().isAutoRead()) {
            // The proxy itself is not reading (dialling, or the upstream is slow): not the client's stall.
            bodyDeadline = now + bodyNanos;
        } else if (now - bodyDeadline > 0 && bodyDeadline != NONE) {
            fire(ctx, ProxyReasons.BODY_TIMEOUT, "request body stalled");
        }
    }

    private void fire(ChannelHandlerContext ctx, String reason, String detail) {
        if (fired || !ctx.channel().isActive()) {
            return;
        }
        fired = true;
        stop();
        ctx.fireChannelRead(new MalformedRequest(HttpResponseStatus.REQUEST_TIMEOUT, reason, detail, null));
    }

    private void stop() {
        headerDeadline = NONE;
        bodyDeadline = NONE;
        idleDeadline = NONE;
        if (ticker != null) {
            ticker.cancel(false);
            ticker = null;
        }
    }
}
