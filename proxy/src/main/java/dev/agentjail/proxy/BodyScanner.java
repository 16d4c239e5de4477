package dev.agentjail.proxy;

import dev.agentjail.proxy.inspect.OutboundRequest;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * The stage that decodes and scans request bodies: each body part of an admitted exchange is counted as the client
 * sent it and replaced by what goes upstream for it ({@link OutboundRequest#transform}: redacted, or, for a compressed
 * body, nothing until the whole body is decoded, scanned and encoded again). When the scan refuses the body, {@link
 * ExchangeSignal.BodyRefused} goes on in its place, and the rest of the body passes unread, to be discarded. Parts of
 * an exchange that was refused pass as they are.
 */
final class BodyScanner extends ChannelInboundHandlerAdapter {
    static final String NAME = "body-scanner";

    /** The exchange whose body is being read, while it is scanned. */
    private Exchange scanning;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof RequestIntake.Outcome outcome) {
            stopScanning();
            Exchange ex = outcome.exchange();
            scanning = outcome instanceof RequestIntake.Admitted && ex.outbound != null && !ex.connect ? ex : null;
            ctx.fireChannelRead(msg);
            return;
        }
        if (!(msg instanceof HttpContent content) || scanning == null) {
            ctx.fireChannelRead(msg);
            return;
        }
        Exchange ex = scanning;
        boolean last = content instanceof LastHttpContent;
        if (last) {
            ex.requestComplete = true;
            scanning = null;
        }
        if (ex.discarding()) {
            // Refused after its head (a dial refused, the audit log down): the rest is dropped unread.
            ex.outbound.releaseHeld();
            ctx.fireChannelRead(content);
            return;
        }
        ex.bytesOut += Exchange.size(content);
        OutboundRequest outbound = ex.outbound;
        HttpContent out = outbound.transform(content, ctx.alloc());
        if (outbound.refused()) {
            if (out != null) {
                out.release();
            }
            scanning = null;
            // The connection closes with the refusal: the exchange handler needs no end of the body.
            ctx.fireChannelRead(new ExchangeSignal.BodyRefused(ex));
            return;
        }
        if (out != null) {
            ctx.fireChannelRead(out);
        }
    }

    /** The body being scanned is left unfinished: what its scan held back is released. */
    private void stopScanning() {
        if (scanning != null) {
            scanning.outbound.releaseHeld();
            scanning = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stopScanning();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stopScanning();
    }
}
