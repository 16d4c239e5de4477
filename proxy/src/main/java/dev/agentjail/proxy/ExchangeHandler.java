package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.http.MalformedRequest;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.inspect.OutboundRequest;
import dev.agentjail.proxy.mcp.McpExchange;
import dev.agentjail.proxy.route.Router;
import dev.agentjail.proxy.tls.UpstreamTls;
import dev.agentjail.proxy.upstream.DialOutcome;
import dev.agentjail.proxy.upstream.Dialer;
import dev.agentjail.proxy.ws.Handshake;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.util.function.Function;

/**
 * The last stage of a client connection: acts on each exchange as the stages before it left it, and either refuses it
 * (with its audit record first), forwards it to the upstream over a connection pinned to this event loop, or turns
 * the connection into a CONNECT tunnel; the upstream's response comes back through the response stages.
 *
 * <p>The stages, in order ({@link #install}): request framing ({@code StrictRequestDecoder}), one request at a time
 * ({@link RequestSequencer}), the decision on its head ({@link RequestIntake}), body decoding and scanning ({@link
 * BodyScanner}), the MCP request gate ({@link McpRequestGate}), this handler. On the upstream connection: response
 * framing, credential scrubbing ({@link ResponseScrubbing}), the MCP response filter ({@link McpResponseFilter}).
 */
final class ExchangeHandler extends ChannelInboundHandlerAdapter {
    static final String NAME = "exchange";

    private final ProxyRuntime runtime;
    private final ProxyResponseEncoder encoder;
    private final Dialer dialer;
    private final UpstreamTls upstreamTls;
    private final RequestSequencer sequencer;

    private ChannelHandlerContext ctx;
    private Exchange current;
    private UpstreamConnection upstream;
    private boolean closing;
    private String clientAddress;
    private boolean clientAddressKnown;

    /** A forward-proxy connection: absolute-form requests and CONNECTs to any host the policy allows. */
    /**
     * Adds the request stages and this handler behind {@code encoder}: requests go through {@code router} to upstreams
     * reached over {@code upstreamTls} (null: plain); {@code spare} is an upstream connection already dialled for the
     * first request, or null.
     */
    static void install(
            ChannelPipeline p,
            ProxyRuntime runtime,
            ProxyResponseEncoder encoder,
            Router router,
            UpstreamTls upstreamTls,
            UpstreamConnection spare) {
        RequestSequencer sequencer = new RequestSequencer();
        p.addLast(RequestSequencer.NAME, sequencer)
                .addLast(RequestIntake.NAME, new RequestIntake(runtime, router))
                .addLast(BodyScanner.NAME, new BodyScanner())
                .addLast(McpRequestGate.NAME, new McpRequestGate())
                .addLast(NAME, new ExchangeHandler(runtime, encoder, sequencer, upstreamTls, spare));
    }

    /** Removes what {@link #install} added: the connection becomes a tunnel. */
    static void uninstall(ChannelPipeline p) {
        p.remove(NAME);
        p.remove(McpRequestGate.NAME);
        p.remove(BodyScanner.NAME);
        p.remove(RequestIntake.NAME);
        p.remove(RequestSequencer.NAME);
    }

    private ExchangeHandler(
            ProxyRuntime runtime,
            ProxyResponseEncoder encoder,
            RequestSequencer sequencer,
            UpstreamTls upstreamTls,
            UpstreamConnection spare) {
        this.runtime = runtime;
        this.encoder = encoder;
        this.sequencer = sequencer;
        this.dialer = runtime.dialer();
        this.upstreamTls = upstreamTls;
        this.upstream = spare;
        if (spare != null) {
            spare.adopt(this);
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
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
        if (closing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        switch (msg) {
            case RequestIntake.Outcome outcome -> onOutcome(outcome);
            case ExchangeSignal signal -> onSignal(signal);
            case MalformedRequest m when current != null -> failInFlight(m); // The body in flight can't complete.
            case MalformedRequest m -> refuseMalformed(m);
            case HttpContent content -> onRequestContent(content);
            case ByteBuf raw
            when current != null && (current.connect || current.websocket) -> {
                current.held.add(raw);
                ctx.channel().config().setAutoRead(false);
            }
            default -> ReferenceCountUtil.release(msg);
        }
    }

    private void onOutcome(RequestIntake.Outcome outcome) {
        Exchange ex = outcome.exchange();
        current = ex;
        if (outcome instanceof RequestIntake.Refused r) {
            if (ex.mcp != null && ex.mcp.refused()) {
                refuseMcp(ex);
            } else {
                refuse(ex, r.decision(), r.status(), r.reason(), r.detail(), r.close());
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
        if (ex != current || ex.discarding()) {
            return; // Already refused, or ended.
        }
        switch (signal) {
            case ExchangeSignal.BodyRefused r -> {
                OutboundRequest o = ex.outbound;
                if (ex.phase() instanceof Exchange.Phase.Collecting) {
                    ex.bytesOut = 0; // Collected, never sent upstream.
                    refuse(ex, AuditRecord.DENY, o.refusalStatus(), o.refusalReason(), o.refusalDetail(), true);
                } else {
                    // The secret's own bytes were held back and never sent: the request upstream stays incomplete.
                    endInFlight(ex, AuditRecord.DENY, o.refusalStatus(), o.refusalReason(), o.refusalDetail());
                }
            }
            case ExchangeSignal.McpReady ready -> proceed(ex);
            case ExchangeSignal.McpRefused refused -> {
                if (ex.phase() instanceof Exchange.Phase.Collecting) {
                    refuseMcp(ex);
                } else {
                    // Found past the start of a body that streams on: its end never reaches the upstream.
                    if (ex.responseStarted) {
                        endInFlight(ex, AuditRecord.DENY, null, ex.mcp.refusalReason(), ex.mcp.refusalDetail());
                    } else {
                        cutUpstream(ex);
                        ex.to(Exchange.DISCARDING);
                        refuse(
                                ex,
                                AuditRecord.DENY,
                                ex.mcp.refusalStatus(),
                                ex.mcp.refusalReason(),
                                ex.mcp.refusalRule(),
                                true,
                                close -> ex.mcp.refusal(ctx.alloc(), close));
                    }
                }
            }
            case ExchangeSignal.ResponseRefused r -> onResponseRefused(r);
        }
    }

    /** Forwards an admitted exchange: over the kept upstream connection if it fits, else through a new one. */
    private void proceed(Exchange ex) {
        ex.to(Exchange.DIALING);
        current = ex;
        if (!ex.connect && upstream != null && upstream.reusableFor(ex.target)) {
            startForwarding(ex);
            return;
        }
        ctx.channel().config().setAutoRead(false);
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
        dial(ex);
    }

    private void dial(Exchange ex) {
        UpstreamConnection conn = ex.connect ? null : new UpstreamConnection(this, ex.target, runtime, upstreamTls);
        ChannelInitializer<Channel> init = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                if (conn != null) {
                    conn.initPipeline(ch);
                }
            }
        };
        Future<DialOutcome> f = dialer.dial(ctx.channel().eventLoop(), ex.target, init);
        f.addListener(done -> onDialled(ex, conn, f.getNow()));
    }

    private void onDialled(Exchange ex, UpstreamConnection conn, DialOutcome outcome) {
        if (current != ex || closing) {
            if (outcome instanceof DialOutcome.Connected c) {
                c.channel().close();
            }
            return;
        }
        switch (outcome) {
            case DialOutcome.Refused r -> {
                ex.dialled = r.address();
                ex.to(Exchange.DISCARDING);
                refuse(
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
                refuse(ex, AuditRecord.ERROR, fail.status(), fail.reason(), fail.detail(), true);
            }
            case DialOutcome.Connected c -> {
                ex.dialled = c.address();
                if (ex.connect) {
                    ex.status = 200;
                    ex.intercepted = runtime.intercepts(ex.target);
                    try {
                        // On disk before the client sees the 200, so even a killed proxy leaves this record.
                        runtime.audit()
                                .append(recordOf(ex)
                                        .decision(AuditRecord.ALLOW)
                                        .reason(ex.allowReason)
                                        .build());
                    } catch (AuditUnavailableException e) {
                        c.channel().close();
                        ex.status = 0;
                        refuseAuditUnavailable(ex);
                        return;
                    }
                    if (ex.intercepted) {
                        InterceptSwitch.establish(ctx, c.channel(), ex, runtime, clientAddress());
                    } else {
                        TunnelSwitch.establish(ctx, c.channel(), ex, runtime, clientAddress());
                    }
                    current = null;
                    closing = true;
                } else {
                    conn.attach(c.channel());
                    upstream = conn;
                    startForwarding(ex);
                }
            }
        }
    }

    private void startForwarding(Exchange ex) {
        ex.to(Exchange.FORWARDING);
        upstream.begin(ex);
        if (!ex.outbound.collects()) {
            upstream.sendHead(ex);
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
                    upstream.sendHead(ex);
                }
                // Counted as it arrived (BodyScanner), like every other body part: the redactor may still hold
                // back the last few bytes of what was collected.
                upstream.write(body, body instanceof LastHttpContent);
            }
        }
        Object o;
        while ((o = ex.held.poll()) != null) {
            forwardContent((HttpContent) o);
        }
        if (!ex.requestComplete) {
            // The head (and any body so far) must go out now: the client may wait for an answer before sending more.
            upstream.flush();
            setAutoRead(upstream.writable());
        }
    }

    /** Changes the client's read interest only when it differs: each change costs a syscall. */
    private void setAutoRead(boolean on) {
        var config = ctx.channel().config();
        if (config.isAutoRead() != on) {
            config.setAutoRead(on);
        }
    }

    private void onRequestContent(HttpContent content) {
        Exchange ex = current;
        if (ex == null) {
            content.release();
            return;
        }
        switch (ex.phase()) {
            case Exchange.Phase.Discarding d -> {
                content.release();
                if (content instanceof LastHttpContent) {
                    ex.requestComplete = true;
                    finishExchange(ex);
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

    /** Answers a refused MCP message with its JSON-RPC error; the connection stays open if the body was read. */
    private void refuseMcp(Exchange ex) {
        McpExchange m = ex.mcp;
        ex.bytesOut = 0; // Refused before anything was dialled: nothing went upstream.
        refuse(
                ex,
                AuditRecord.DENY,
                m.refusalStatus(),
                m.refusalReason(),
                m.refusalRule(),
                !ex.requestComplete,
                close -> m.refusal(ctx.alloc(), close));
        m.answerOnStream();
    }

    /** One body part as the request stages left it (redacted), to the upstream. */
    private void forwardContent(HttpContent out) {
        Exchange ex = current;
        boolean last = out instanceof LastHttpContent;
        if (last) {
            ex.requestComplete = true;
        }
        if (ex.outbound.collects()) {
            // A compressed body comes whole, decoded, scanned and encoded again: its head carries the new length.
            upstream.sendHead(ex);
        }
        upstream.write(out, last);
        if (!last && !upstream.writable()) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    /**
     * Ends the exchange in flight on a failure: before its response started, the client gets {@code status} and
     * the exchange its record; after, the record says what went wrong and the connection closes, since a
     * half-sent response cannot be finished.
     */
    private void endInFlight(Exchange ex, String decision, HttpResponseStatus status, String reason, String detail) {
        cutUpstream(ex);
        if (!ex.responseStarted) {
            ex.to(Exchange.DISCARDING);
            refuse(ex, decision, status, reason, detail, true);
            return;
        }
        recordQuietly(
                recordOf(ex).decision(decision).reason(reason).error(detail).build());
        current = null;
        closeNow();
    }

    /** The upstream connection of an exchange that ends on a failure is closed: nothing more goes or comes. */
    private void cutUpstream(Exchange ex) {
        endMcp(ex);
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (upstream != null) {
            upstream.flush();
        }
        ctx.fireChannelReadComplete();
    }

    // ---- callbacks from the upstream connection (same event loop) ----

    /** The response head, as the response stages left it. */
    void onResponseHead(HttpResponse response, boolean head) {
        Exchange ex = current;
        if (ex.mcp != null && ex.mcp.responseMode() == McpExchange.ResponseMode.SSE) {
            // A legacy session puts refusals of its POSTs (other connections) on this stream.
            ex.mcp.streamTo(ctx.channel().eventLoop(), event -> addEvent(ex, event));
        }
        writeResponseHead(ex, response, head);
    }

    /** Adds one complete event to the event stream of {@code ex}, between the upstream's events; on this loop. */
    private void addEvent(Exchange ex, byte[] event) {
        if (current != ex || closing || !ex.responseStarted) {
            return;
        }
        ex.bytesIn += event.length;
        ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event)));
    }

    private void writeResponseHead(Exchange ex, HttpResponse response, boolean head) {
        encoder.answeringHead(head);
        ex.responseStarted = true;
        ex.status = response.status().code();
        if (!ex.clientKeepAlive || !ex.requestComplete) {
            // An early response leaves the rest of the request body unframed: this connection ends with it.
            ex.closeAfter = true;
        }
        ex.closeAfter = Http10Framing.adapt(ex.request, response, ex.closeAfter);
        if (ex.closeAfter) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        ctx.write(response);
    }

    /**
     * The upstream accepted a WebSocket upgrade: unless its 101 answers something that was not asked (502), the
     * exchange is recorded (decided like any request, status 101) and both connections become an inspecting message
     * relay whose close writes a {@code tunnel-close} record.
     */
    void onUpgraded(HttpResponse response) {
        Exchange ex = current;
        Handshake.Outcome handshake = Handshake.check(ex.outbound.headers(), response.headers());
        if (handshake instanceof Handshake.Refused r) {
            endInFlight(
                    ex,
                    AuditRecord.DENY,
                    HttpResponseStatus.BAD_GATEWAY,
                    ProxyReasons.WEBSOCKET_HANDSHAKE_REFUSED,
                    r.detail());
            return;
        }
        ex.status = 101;
        ex.responseStarted = true;
        try {
            runtime.audit()
                    .append(recordOf(ex)
                            .decision(AuditRecord.ALLOW)
                            .reason(ex.allowReason)
                            .build());
        } catch (AuditUnavailableException e) {
            current = null;
            closeNow();
            return;
        }
        UpstreamConnection conn = upstream;
        upstream = null;
        current = null;
        closing = true;
        TunnelSwitch.upgrade(
                ctx, conn, ex, runtime, clientAddress(), response, ((Handshake.Accepted) handshake).extensions());
    }

    /** A response body part, as the response stages left it: counted as sent to the client. */
    void onResponseContent(HttpContent content) {
        Exchange ex = current;
        if (ex.mcp != null) {
            recordStreamMessages(ex);
        }
        ex.bytesIn += Exchange.size(content);
        if (content instanceof LastHttpContent last) {
            completeExchange(ex, last);
            return;
        }
        ctx.write(content);
    }

    /** A response stage refused the response: nothing more of it reaches the client. */
    void onResponseRefused(ExchangeSignal.ResponseRefused r) {
        Exchange ex = r.exchange();
        if (ex != current) {
            return;
        }
        if (ex.mcp != null) {
            recordStreamMessages(ex);
        }
        endInFlight(ex, r.decision(), r.status(), r.reason(), r.detail());
    }

    /** Records the MCP messages of a response that have records of their own (dropped, or filtered on a stream). */
    private void recordStreamMessages(Exchange ex) {
        for (McpExchange.StreamMessage message : ex.mcp.takeStreamMessages()) {
            recordQuietly(recordOf(ex)
                    .kind(AuditRecord.KIND_MCP_MESSAGE)
                    .decision(message.decision())
                    .reason(message.reason())
                    .mcp(message.details())
                    .build());
        }
    }

    void onUpstreamReadComplete() {
        ctx.flush();
        if (upstream != null && !ctx.channel().isWritable()) {
            upstream.pauseReading();
        }
    }

    /** The upstream failed or closed before the response completed. */
    void onUpstreamFailure(HttpResponseStatus status, String reason, String detail) {
        Exchange ex = current;
        upstream = null;
        if (ex != null) {
            endInFlight(ex, AuditRecord.ERROR, status, reason, detail);
        }
    }

    private void completeExchange(Exchange ex, LastHttpContent last) {
        endMcp(ex);
        AuditRecord record =
                recordOf(ex).decision(AuditRecord.ALLOW).reason(ex.allowReason).build();
        try {
            runtime.audit().append(record);
        } catch (AuditUnavailableException e) {
            // The response must not complete without its record: cut the connection instead.
            last.release();
            current = null;
            closeNow();
            return;
        }
        if (!ex.requestComplete) {
            // Early response: the rest of the body can't be trusted to frame the next request.
            ex.closeAfter = true;
        }
        if (ex.closeAfter && upstream != null) {
            upstream.close();
            upstream = null;
        }
        var write = ctx.writeAndFlush(last);
        if (upstream != null) {
            upstream.released();
        }
        current = null;
        if (ex.closeAfter) {
            closing = true;
            write.addListener(ChannelFutureListener.CLOSE);
            return;
        }
        resumeAfterExchange();
    }

    private void finishExchange(Exchange ex) {
        if (current == ex) {
            current = null;
        }
        resumeAfterExchange();
    }

    private void resumeAfterExchange() {
        if (!closing) {
            // The next request waiting in the sequencer goes on, or the connection is idle.
            sequencer.exchangeDone();
        }
    }

    // ---- refusals ----

    private void refuse(
            Exchange ex, String decision, HttpResponseStatus status, String reason, String line, boolean close) {
        refuse(
                ex,
                decision,
                status,
                reason,
                ex.rule,
                close,
                c -> Responses.refusal(ctx.alloc(), status, reason, ex.rule, line, c));
    }

    /** Records the refusal (decided by {@code rule}) and answers with {@code answer}, built for the final close flag. */
    private void refuse(
            Exchange ex,
            String decision,
            HttpResponseStatus status,
            String reason,
            String rule,
            boolean close,
            Function<Boolean, FullHttpResponse> answer) {
        ex.status = status.code();
        AuditRecord record =
                recordOf(ex).decision(decision).reason(reason).rule(rule).build();
        try {
            runtime.audit().append(record);
        } catch (AuditUnavailableException e) {
            answer = c -> Responses.refusal(
                    ctx.alloc(),
                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                    ProxyReasons.AUDIT_UNAVAILABLE,
                    ex.rule,
                    "the audit log cannot be written; no request is served until it can",
                    c);
            close = true;
        }
        ex.releaseHeld();
        boolean closeNow = close || !ex.clientKeepAlive;
        encoder.answeringHead(ex.request.method().equals(io.netty.handler.codec.http.HttpMethod.HEAD));
        FullHttpResponse refusal = answer.apply(closeNow);
        Http10Framing.adapt(ex.request, refusal, closeNow);
        var write = ctx.writeAndFlush(refusal);
        if (closeNow) {
            closing = true;
            current = null;
            write.addListener(ChannelFutureListener.CLOSE);
            return;
        }
        current = ex;
        ex.to(Exchange.DISCARDING);
        if (ex.requestComplete) {
            finishExchange(ex);
        } else {
            ctx.channel().config().setAutoRead(true);
        }
    }

    private void refuseMalformed(MalformedRequest m) {
        AuditRecord record = AuditRecord.builder()
                .ts(runtime.clock().instant())
                .session(runtime.session())
                .decision(AuditRecord.ERROR)
                .reason(m.reason())
                .rule("-")
                .status(m.status().code())
                .tls(AuditRecord.TLS_NONE)
                .client(clientAddress())
                .error(m.detail())
                .firstBytesSha256(m.firstBytesSha256())
                .build();
        recordQuietly(record);
        closing = true;
        encoder.answeringHead(false);
        ctx.writeAndFlush(Responses.refusal(ctx.alloc(), m.status(), m.reason(), "-", m.detail(), true))
                .addListener(ChannelFutureListener.CLOSE);
    }

    private void failInFlight(MalformedRequest m) {
        Exchange ex = current;
        if (ex.discarding()) {
            // Already refused and recorded; the body it was discarding stalled or broke.
            current = null;
            closeNow();
            return;
        }
        if (!ex.responseStarted) {
            ex.error = m.detail();
        }
        endInFlight(ex, AuditRecord.ERROR, m.status(), m.reason(), m.detail());
    }

    /** Fail closed: while the audit log cannot be written, nothing is served. */
    private void refuseAuditUnavailable(Exchange ex) {
        refuse(
                ex,
                AuditRecord.ERROR,
                HttpResponseStatus.SERVICE_UNAVAILABLE,
                ProxyReasons.AUDIT_UNAVAILABLE,
                RequestIntake.AUDIT_UNAVAILABLE_DETAIL,
                true);
    }

    // ---- lifecycle ----

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Exchange ex = current;
        current = null;
        if (ex != null) {
            endMcp(ex);
        }
        if (ex != null && !ex.discarding()) {
            recordQuietly(recordOf(ex)
                    .decision(AuditRecord.ERROR)
                    .reason(ProxyReasons.CLIENT_CLOSED)
                    .error("client closed the connection before the exchange completed")
                    .build());
        }
        if (ex != null) {
            ex.releaseHeld();
        }
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable() && upstream != null) {
            upstream.resumeReading();
        }
        ctx.fireChannelWritabilityChanged();
    }

    /** Called by the upstream when it can take more request body again. */
    void onUpstreamWritable() {
        if (current != null && !current.requestComplete && !closing) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // I/O errors on the client socket (reset by peer, …): the inactive event records the exchange.
        closeNow();
    }

    private void closeNow() {
        closing = true;
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
        ctx.close();
    }

    /** The exchange's stream ended: a legacy session it opened ends with it (its message endpoint is closed). */
    private static void endMcp(Exchange ex) {
        if (ex.mcp != null) {
            ex.mcp.end();
        }
    }

    private void recordQuietly(AuditRecord record) {
        try {
            runtime.audit().append(record);
        } catch (AuditUnavailableException e) {
            // Already refusing or closing; the sink reports itself unhealthy to the operator.
        }
    }

    /** The peer's address as ip:port, computed once per connection (it is on every record). */
    String clientAddress() {
        if (!clientAddressKnown) {
            var remote = ctx.channel().remoteAddress();
            clientAddress = remote == null ? null : remote.toString().replaceFirst("^/", "");
            clientAddressKnown = true;
        }
        return clientAddress;
    }

    /** The exchange's record so far; the caller adds the decision and outcome. */
    private AuditRecord.Builder recordOf(Exchange ex) {
        return ex.record(runtime.session(), clientAddress(), System.nanoTime());
    }
}
