package dev.agentjail.proxy;

import dev.agentjail.proxy.http.MalformedRequest;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * The first stage after request framing: lets one request through at a time. A request pipelined behind the one in
 * flight (its head, body and any framing error that belongs to it) waits here, in order, with reading from the client
 * paused, until the exchange handler says the one in flight is done ({@link #exchangeDone}). Raw bytes (after a
 * CONNECT or a WebSocket upgrade) always pass: they belong to the exchange in flight.
 */
final class RequestSequencer extends ChannelInboundHandlerAdapter {
    static final String NAME = "sequencer";

    private final ArrayDeque<Object> queued = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    /** A request's head went through and its exchange is not done. */
    private boolean inFlight;
    /** The last part of the body of the request in flight went through. */
    private boolean bodyComplete;

    private boolean draining;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!queued.isEmpty() || mustWait(msg)) {
            queued.add(msg);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        pass(msg);
    }

    /** Whether {@code msg} belongs to a later request than the one in flight. */
    private boolean mustWait(Object msg) {
        if (!inFlight || msg instanceof ByteBuf) {
            return false;
        }
        return bodyComplete || msg instanceof HttpRequest;
    }

    private void pass(Object msg) {
        if (msg instanceof HttpRequest) {
            inFlight = true;
            bodyComplete = false;
        } else if (msg instanceof LastHttpContent || (msg instanceof MalformedRequest && inFlight)) {
            bodyComplete = true;
        } else if (msg instanceof MalformedRequest) {
            // Refused with the connection's close; nothing after it is read.
            inFlight = true;
            bodyComplete = true;
        }
        ctx.fireChannelRead(msg);
    }

    /**
     * The exchange in flight ended and the connection stays open: the next request waiting here goes on, with its
     * body parts up to the request after it. When none is waiting, the connection is idle: the client timeouts hear
     * of it and reading resumes. Called on the event loop, also from within a request it lets through.
     */
    void exchangeDone() {
        inFlight = false;
        bodyComplete = false;
        if (draining) {
            return; // The loop below goes on with the next one.
        }
        draining = true;
        try {
            while (!queued.isEmpty()
                    && !mustWait(queued.peek())
                    && ctx.channel().isOpen()) {
                pass(queued.poll());
            }
        } finally {
            draining = false;
        }
        if (!inFlight && ctx.channel().isOpen()) {
            // Idle from now on: ClientTimeouts closes the connection if no new request head arrives in time.
            ctx.pipeline().fireUserEventTriggered(ClientTimeouts.EXCHANGE_DONE);
            if (!ctx.channel().config().isAutoRead()) {
                ctx.channel().config().setAutoRead(true);
            }
        }
    }

    /** Whether a body part or framing error is waiting behind the request in flight (tests). */
    int waiting() {
        return queued.size();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseQueued();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseQueued();
    }

    private void releaseQueued() {
        Object o;
        while ((o = queued.poll()) != null) {
            ReferenceCountUtil.release(o);
        }
    }
}
