package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.http.MalformedRequest;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.inspect.OutboundRequest;
import dev.agentjail.proxy.tls.UpstreamTls;
import dev.agentjail.proxy.upstream.DialOutcome;
import dev.agentjail.proxy.upstream.Dialer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;

/**
 * The last stage of a client connection ({@link ClientPipeline}): acts on each exchange as the stages before it left
 * it, and either refuses it (with its audit record first), forwards it to the upstream over a connection pinned to this
 * event loop, or turns the connection into a CONNECT tunnel; the upstream's response comes back through the response
 * stages to its {@link ResponseRelay}.
 */
final class ExchangeHandler extends ChannelInboundHandlerAdapter {
    static final String NAME = "exchange";

    private final ProxyRuntime runtime;
    private final Dialer dialer;
    private final UpstreamTls upstreamTls;
    /** The connection's state, shared with the response side. */
    private final ClientConnection conn;
    /** Where the upstream connection hands the response. */
    private final ResponseRelay relay;

    private ChannelHandlerContext ctx;

    /** A forward-proxy connection: absolute-form requests and CONNECTs to any host the policy allows. */
    ExchangeHandler(
            ProxyRuntime runtime,
            ProxyResponseEncoder encoder,
            RequestSequencer sequencer,
            UpstreamTls upstreamTls,
            UpstreamConnection spare) {
        this.runtime = runtime;
        this.conn = new ClientConnection(runtime, encoder, sequencer);
        this.relay = new ResponseRelay(conn);
        this.dialer = runtime.dialer();
        this.upstreamTls = upstreamTls;
        conn.upstream = spare;
        if (spare != null) {
            spare.adopt(relay);
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        conn.ctx = ctx;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == StrictRequestDecoder.HEAD_STARTED) {
            // ClientTimeouts owns the clocks; nothing to do here.
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (conn.closing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        switch (msg) {
            case RequestIntake.Outcome outcome -> onOutcome(outcome);
            case ExchangeSignal signal -> onSignal(signal);
            case MalformedRequest m
            when conn.current != null -> conn.failInFlight(m); // The body in flight can't complete.
            case MalformedRequest m -> conn.refuseMalformed(m);
            case HttpContent content -> onRequestContent(content);
            case ByteBuf raw
            when conn.current != null && (conn.current.connect || conn.current.websocket) -> {
                conn.current.held.add(raw);
                ctx.channel().config().setAutoRead(false);
            }
            default -> ReferenceCountUtil.release(msg);
        }
    }

    private void onOutcome(RequestIntake.Outcome outcome) {
        Exchange ex = outcome.exchange();
        conn.current = ex;
        if (outcome instanceof RequestIntake.Refused r) {
            if (ex.mcp != null && ex.mcp.refused()) {
                conn.refuseMcp(ex);
            } else {
                conn.refuse(ex, r.decision(), r.status(), r.reason(), r.detail(), r.close());
            }
            return;
        }
        if (ex.mcp != null && ex.mcp.collecting()) {
            // Decided on its body before anything is dialled: a refused MCP call never reaches the server.
            ex.to(Exchange.COLLECTING);
            if (ex.expectContinue) {
                ex.continueSent = true;
                ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
            }
            return;
        }
        proceed(ex);
    }

    /** A verdict of a request stage on the exchange in flight. */
    private void onSignal(ExchangeSignal signal) {
        Exchange ex = signal.exchange();
        if (ex != conn.current || ex.discarding()) {
            return; // Already refused, or ended.
        }
        switch (signal) {
            case ExchangeSignal.BodyRefused r -> {
                OutboundRequest o = ex.outbound;
                if (ex.phase() instanceof Exchange.Phase.Collecting) {
                    ex.bytesOut = 0; // Collected, never sent upstream.
                    conn.refuse(ex, AuditRecord.DENY, o.refusalStatus(), o.refusalReason(), o.refusalDetail(), true);
                } else {
                    // The secret's own bytes were held back and never sent: the request upstream stays incomplete.
                    conn.endInFlight(ex, AuditRecord.DENY, o.refusalStatus(), o.refusalReason(), o.refusalDetail());
                }
            }
            case ExchangeSignal.McpReady ready -> proceed(ex);
            case ExchangeSignal.McpRefused refused -> conn.refuseMcp(ex);
            case ExchangeSignal.ResponseRefused r -> relay.onResponseRefused(r);
        }
    }

    /** Forwards an admitted exchange: over the kept upstream connection if it fits, else through a new one. */
    private void proceed(Exchange ex) {
        ex.to(Exchange.DIALING);
        conn.current = ex;
        if (!ex.connect && conn.upstream != null && conn.upstream.reusableFor(ex.target)) {
            startForwarding(ex);
            return;
        }
        ctx.channel().config().setAutoRead(false);
        if (conn.upstream != null) {
            conn.upstream.close();
            conn.upstream = null;
        }
        dial(ex);
    }

    private void dial(Exchange ex) {
        UpstreamConnection up = ex.connect ? null : new UpstreamConnection(relay, ex.target, runtime, upstreamTls);
        ChannelInitializer<Channel> init = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                if (up != null) {
                    up.initPipeline(ch);
                }
            }
        };
        Future<DialOutcome> f = dialer.dial(ctx.channel().eventLoop(), ex.target, init);
        f.addListener(done -> onDialled(ex, up, f.getNow()));
    }

    private void onDialled(Exchange ex, UpstreamConnection up, DialOutcome outcome) {
        if (conn.current != ex || conn.closing) {
            if (outcome instanceof DialOutcome.Connected c) {
                c.channel().close();
            }
            return;
        }
        switch (outcome) {
            case DialOutcome.Refused r -> {
                ex.dialled = r.address();
                ex.to(Exchange.DISCARDING);
                conn.refuse(
                        ex,
                        AuditRecord.DENY,
                        HttpResponseStatus.FORBIDDEN,
                        r.reason(),
                        RequestIntake.describe(ex) + " refused: "
                                + (r.detail() != null
                                        ? r.detail()
                                        : ex.target.host() + " resolves to a non-public address"),
                        true);
            }
            case DialOutcome.Failed fail -> {
                ex.dialled = fail.address();
                ex.to(Exchange.DISCARDING);
                conn.refuse(ex, AuditRecord.ERROR, fail.status(), fail.reason(), fail.detail(), true);
            }
            case DialOutcome.Connected c -> {
                ex.dialled = c.address();
                if (ex.connect) {
                    relay.openTunnel(ex, c.channel());
                } else {
                    up.attach(c.channel());
                    conn.upstream = up;
                    startForwarding(ex);
                }
            }
        }
    }

    private void startForwarding(Exchange ex) {
        ex.to(Exchange.FORWARDING);
        conn.upstream.begin(ex);
        if (!ex.outbound.collects()) {
            conn.upstream.sendHead(ex);
        }
        if (ex.expectContinue && !ex.continueSent) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        }
        if (ex.mcp != null && ex.mcp.collecting()) {
            // Already redacted and inspected while it was collected.
            HttpContent body = ex.mcp.takeBody();
            if (body != null) {
                if (ex.outbound.collects()) {
                    // A compressed body, decoded, redacted and looked at for MCP whole: its head (with the length of
                    // what is sent) goes now.
                    conn.upstream.sendHead(ex);
                }
                // Counted as it arrived (BodyScanner), like every other body part: the redactor may still hold
                // back the last few bytes of what was collected.
                conn.upstream.write(body, body instanceof LastHttpContent);
            }
        }
        Object o;
        while ((o = ex.held.poll()) != null) {
            forwardContent((HttpContent) o);
        }
        if (!ex.requestComplete) {
            // The head (and any body so far) must go out now: the client may wait for an answer before sending more.
            conn.upstream.flush();
            conn.setAutoRead(conn.upstream.writable());
        }
    }

    private void onRequestContent(HttpContent content) {
        Exchange ex = conn.current;
        if (ex == null) {
            content.release();
            return;
        }
        switch (ex.phase()) {
            case Exchange.Phase.Discarding d -> {
                content.release();
                if (content instanceof LastHttpContent) {
                    ex.requestComplete = true;
                    conn.finishExchange(ex);
                }
            }
            case Exchange.Phase.Dialing d -> {
                if (content instanceof LastHttpContent) {
                    ex.requestComplete = true;
                }
                ex.held.add(content);
            }
            case Exchange.Phase.Forwarding f -> forwardContent(content);
            // The gate holds a collected body; nothing of it comes here before its verdict.
            case Exchange.Phase.Collecting c -> content.release();
            case Exchange.Phase.Deciding d -> content.release();
        }
    }

    /** One body part as the request stages left it (redacted), to the upstream. */
    private void forwardContent(HttpContent out) {
        Exchange ex = conn.current;
        boolean last = out instanceof LastHttpContent;
        if (last) {
            ex.requestComplete = true;
        }
        if (ex.outbound.collects()) {
            // A compressed body comes whole, decoded, scanned and encoded again: its head carries the new length.
            conn.upstream.sendHead(ex);
        }
        conn.upstream.write(out, last);
        if (!last && !conn.upstream.writable()) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (conn.upstream != null) {
            conn.upstream.flush();
        }
        ctx.fireChannelReadComplete();
    }

    // ---- lifecycle ----

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Exchange ex = conn.current;
        conn.current = null;
        if (ex != null) {
            conn.endMcp(ex);
        }
        if (ex != null && !ex.discarding()) {
            conn.recordQuietly(conn.recordOf(ex)
                    .decision(AuditRecord.ERROR)
                    .reason(ProxyReasons.CLIENT_CLOSED)
                    .error("client closed the connection before the exchange completed")
                    .build());
        }
        if (ex != null) {
            ex.releaseHeld();
        }
        if (conn.upstream != null) {
            conn.upstream.close();
            conn.upstream = null;
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable() && conn.upstream != null) {
            conn.upstream.resumeReading();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // I/O errors on the client socket (reset by peer, …): the inactive event records the exchange.
        conn.closeNow();
    }
}
