package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.http.MalformedRequest;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.inspect.OutboundRequest;
import dev.agentjail.proxy.inspect.ResponseScrubber;
import dev.agentjail.proxy.mcp.McpErrors;
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
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.util.ArrayDeque;
import java.util.function.Function;

/**
 * Drives one client connection: takes decoded requests one at a time, decides on each, and either
 * refuses it (with its audit record first), forwards it to the upstream over a connection pinned to
 * this event loop, or turns the connection into a CONNECT tunnel.
 *
 * <p>Requests pipelined behind the one in flight wait in order; reading from the client pauses
 * while a response is outstanding, so that queue stays small.
 */
final class ExchangeHandler extends ChannelInboundHandlerAdapter {
    static final String NAME = "exchange";

    private final ProxyRuntime runtime;
    private final ProxyResponseEncoder encoder;
    private final RequestIntake intake;
    private final Dialer dialer;
    private final UpstreamTls upstreamTls;
    private final ArrayDeque<Object> queued = new ArrayDeque<>();

    private ChannelHandlerContext ctx;
    private Exchange current;
    private UpstreamConnection upstream;
    private boolean closing;
    private String clientAddress;
    private boolean clientAddressKnown;

    /** A forward-proxy connection: absolute-form requests and CONNECTs to any host the policy allows. */
    ExchangeHandler(ProxyRuntime runtime, ProxyResponseEncoder encoder) {
        this(runtime, encoder, runtime.router(), null, null);
    }

    /**
     * A connection whose requests go through {@code router} to upstreams reached over {@code upstreamTls}
     * (null: plain); {@code spare} is an upstream connection already dialled for the first request.
     */
    ExchangeHandler(
            ProxyRuntime runtime,
            ProxyResponseEncoder encoder,
            Router router,
            UpstreamTls upstreamTls,
            UpstreamConnection spare) {
        this.runtime = runtime;
        this.encoder = encoder;
        this.intake = new RequestIntake(runtime, router);
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
        if (!queued.isEmpty() || mustWait(msg)) {
            queued.add(msg);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        handle(msg);
    }

    /** Whether {@code msg} belongs to a later request than the one in flight. */
    private boolean mustWait(Object msg) {
        if (current == null || ((current.connect || current.websocket) && msg instanceof ByteBuf)) {
            return false;
        }
        if (msg instanceof MalformedRequest) {
            return current.requestComplete;
        }
        return current.requestComplete || msg instanceof HttpRequest;
    }

    private void handle(Object msg) {
        if (current != null && msg instanceof MalformedRequest m) {
            // A timeout or framing error in the body of the request in flight: it can't complete.
            failInFlight(m);
            return;
        }
        dispatch(msg);
    }

    private void dispatch(Object msg) {
        if (msg instanceof MalformedRequest m) {
            refuseMalformed(m);
        } else if (msg instanceof HttpRequest request) {
            onRequest(request);
        } else if (msg instanceof HttpContent content) {
            onRequestContent(content);
        } else if (msg instanceof ByteBuf raw && current != null && (current.connect || current.websocket)) {
            current.held.add(raw);
            ctx.channel().config().setAutoRead(false);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onRequest(HttpRequest request) {
        RequestIntake.Outcome outcome = intake.admit(request);
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
            ex.phase = Exchange.Phase.COLLECTING;
            if (ex.expectContinue) {
                ex.continueSent = true;
                ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
            }
            return;
        }
        proceed(ex);
    }

    /** Forwards an admitted exchange: over the kept upstream connection if it fits, else through a new one. */
    private void proceed(Exchange ex) {
        ex.phase = Exchange.Phase.DIALING;
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
                ex.phase = Exchange.Phase.DISCARD;
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
                ex.phase = Exchange.Phase.DISCARD;
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
        ex.phase = Exchange.Phase.FORWARDING;
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
                // Counted as it arrived (collectMcp), like every other body part: the redactor may still hold
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
        switch (ex.phase) {
            case DISCARD -> {
                content.release();
                if (content instanceof LastHttpContent) {
                    ex.requestComplete = true;
                    finishExchange(ex);
                }
            }
            case DIALING -> {
                if (content instanceof LastHttpContent) {
                    ex.requestComplete = true;
                }
                ex.held.add(content);
            }
            case FORWARDING -> forwardContent(content);
            case COLLECTING -> collectMcp(ex, content);
        }
    }

    /** One body part of a request whose MCP content is decided before it is forwarded. */
    private void collectMcp(Exchange ex, HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        ex.bytesOut += Exchange.size(content);
        if (last) {
            ex.requestComplete = true;
        }
        // Redacted first: the decision is made on exactly the bytes the server would get.
        HttpContent out = ex.outbound.transform(content, ctx.alloc());
        if (ex.outbound.refused()) {
            if (out != null) {
                out.release();
            }
            ex.bytesOut = 0; // Collected, never sent upstream.
            OutboundRequest o = ex.outbound;
            refuse(ex, AuditRecord.DENY, o.refusalStatus(), o.refusalReason(), o.refusalDetail(), true);
            return;
        }
        switch (ex.mcp.offer(out, last)) {
            case MORE -> {}
            case FORWARD -> proceed(ex);
            case REFUSE -> refuseMcp(ex);
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

    private void forwardContent(HttpContent content) {
        Exchange ex = current;
        ex.bytesOut += Exchange.size(content);
        boolean last = content instanceof LastHttpContent;
        if (last) {
            ex.requestComplete = true;
        }
        HttpContent out = ex.outbound.transform(content, ctx.alloc());
        if (ex.outbound.refused()) {
            abortForSecret(ex);
            return;
        }
        if (out == null) {
            // Collected for inspection; nothing goes out until the body is complete.
            return;
        }
        if (ex.outbound.collects()) {
            upstream.sendHead(ex);
        }
        upstream.write(out, last);
        if (!last && !upstream.writable()) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    /**
     * A secret the policy blocks turned up in the body: the upstream connection is cut with the request
     * incomplete (the secret's own bytes were held back and never sent), and the client is refused.
     */
    private void abortForSecret(Exchange ex) {
        OutboundRequest out = ex.outbound;
        endInFlight(ex, AuditRecord.DENY, out.refusalStatus(), out.refusalReason(), out.refusalDetail());
    }

    /**
     * Ends the exchange in flight on a failure: before its response started, the client gets {@code status} and
     * the exchange its record; after, the record says what went wrong and the connection closes, since a
     * half-sent response cannot be finished.
     */
    private void endInFlight(Exchange ex, String decision, HttpResponseStatus status, String reason, String detail) {
        endMcp(ex);
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
        if (!ex.responseStarted) {
            ex.phase = Exchange.Phase.DISCARD;
            refuse(ex, decision, status, reason, detail, true);
            return;
        }
        recordQuietly(
                recordOf(ex).decision(decision).reason(reason).error(detail).build());
        current = null;
        closeNow();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (upstream != null) {
            upstream.flush();
        }
        ctx.fireChannelReadComplete();
    }

    // ---- callbacks from the upstream connection (same event loop) ----

    void onResponseHead(HttpResponse response, boolean head) {
        Exchange ex = current;
        ResponseScrubber scrubber = scrubberOf(ex);
        if (scrubber != null) {
            // Every line of Content-Encoding, and any transfer-coding but chunked: a client decodes what it names.
            String coding = null;
            for (String line : response.headers().getAll(HttpHeaderNames.CONTENT_ENCODING)) {
                for (String c : line.split(",")) {
                    if (!c.isBlank() && !c.strip().equalsIgnoreCase("identity")) {
                        coding = line;
                    }
                }
            }
            for (String line : response.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING)) {
                for (String c : line.split(",")) {
                    if (!c.isBlank() && !c.strip().equalsIgnoreCase("chunked")) {
                        coding = line;
                    }
                }
            }
            if (coding != null) {
                // Asked for identity; a compressed body could carry the injected value past the scrubber.
                endInFlight(
                        ex,
                        AuditRecord.DENY,
                        HttpResponseStatus.BAD_GATEWAY,
                        ProxyReasons.CREDENTIAL_RESPONSE_ENCODED,
                        "the response to a request carrying an injected credential came encoded (" + coding.strip()
                                + "), which the proxy cannot scrub of the credential");
                return;
            }
            scrubber.scrub(response.headers());
        }
        if (ex.mcp != null) {
            McpExchange.ResponseMode mode = ex.mcp.onResponseHead(response);
            if (mode == McpExchange.ResponseMode.REFUSE) {
                // Nothing of it reaches the client: the upstream connection is cut, the client gets a 502.
                endInFlight(
                        ex,
                        AuditRecord.DENY,
                        HttpResponseStatus.BAD_GATEWAY,
                        ex.mcp.responseReason(),
                        ex.mcp.responseProblem());
                return;
            }
            if (mode == McpExchange.ResponseMode.JSON) {
                // Held back until the body is filtered: its length changes.
                return;
            }
            if (mode == McpExchange.ResponseMode.SSE) {
                // A legacy session puts refusals of its POSTs (other connections) on this stream.
                ex.mcp.streamTo(ctx.channel().eventLoop(), event -> addEvent(ex, event));
            }
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

    /** The scrubber of a response to a request that carried an injected credential, else null. */
    private static ResponseScrubber scrubberOf(Exchange ex) {
        return ex.outbound == null ? null : ex.outbound.scrubber().orElse(null);
    }

    void onResponseContent(HttpContent content) {
        Exchange ex = current;
        ResponseScrubber scrubber = scrubberOf(ex);
        if (scrubber != null) {
            boolean isLast = content instanceof LastHttpContent;
            HttpHeaders trailers = isLast ? ((LastHttpContent) content).trailingHeaders() : null;
            ByteBuf scrubbed = scrubber.scrub(content.content(), isLast, ctx.alloc());
            if (isLast) {
                DefaultLastHttpContent last = new DefaultLastHttpContent(scrubbed);
                last.trailingHeaders().set(trailers);
                scrubber.scrub(last.trailingHeaders());
                content = last;
            } else {
                content = new DefaultHttpContent(scrubbed);
            }
        }
        if (ex.mcp != null && ex.mcp.responseMode() != McpExchange.ResponseMode.PASS) {
            // Counted as sent to the client, after filtering.
            mcpResponseContent(ex, content);
            return;
        }
        ex.bytesIn += Exchange.size(content);
        if (content instanceof LastHttpContent last) {
            completeExchange(ex, last);
            return;
        }
        ctx.write(content);
    }

    /** A response part from an approved MCP server: list results and event streams are filtered. */
    private void mcpResponseContent(Exchange ex, HttpContent content) {
        McpExchange m = ex.mcp;
        boolean last = content instanceof LastHttpContent;
        if (m.responseMode() == McpExchange.ResponseMode.SSE) {
            ByteBuf out = m.filterSse(content.content(), last, ctx.alloc());
            content.release();
            recordStreamMessages(ex);
            if (out != null) {
                ex.bytesIn += out.readableBytes();
            }
            if (out == null) {
                endInFlight(
                        ex, m.streamDecision(), HttpResponseStatus.BAD_GATEWAY, m.streamReason(), m.streamProblem());
            } else if (last) {
                completeExchange(ex, new DefaultLastHttpContent(out));
            } else if (out.isReadable()) {
                ctx.write(new DefaultHttpContent(out));
            } else {
                out.release();
            }
            return;
        }
        if (!m.collectResponse(content)) {
            endInFlight(ex, AuditRecord.ERROR, HttpResponseStatus.BAD_GATEWAY, m.responseReason(), m.responseProblem());
            return;
        }
        if (!last) {
            return;
        }
        byte[] body = m.filteredResponse();
        recordStreamMessages(ex);
        if (body == null) {
            String decision =
                    McpErrors.REASON_UNINSPECTABLE.equals(m.responseReason()) ? AuditRecord.ERROR : AuditRecord.DENY;
            endInFlight(ex, decision, HttpResponseStatus.BAD_GATEWAY, m.responseReason(), m.responseProblem());
            return;
        }
        ex.bytesIn += body.length;
        HttpResponse head = m.heldHead();
        head.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
        head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        writeResponseHead(ex, head, false);
        completeExchange(ex, new DefaultLastHttpContent(Unpooled.wrappedBuffer(body)));
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
        // A queued request is followed by its own body parts: hand those over too, up to the next request.
        while (!closing && !queued.isEmpty() && !mustWait(queued.peek())) {
            handle(queued.poll());
        }
        if (current == null && !closing) {
            // Idle from now on: ClientTimeouts closes the connection if no new request head arrives in time.
            ctx.pipeline().fireUserEventTriggered(ClientTimeouts.EXCHANGE_DONE);
            setAutoRead(true);
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
        ex.phase = Exchange.Phase.DISCARD;
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
        if (ex.phase == Exchange.Phase.DISCARD) {
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
        if (ex != null && ex.phase != Exchange.Phase.DISCARD) {
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
        Object o;
        while ((o = queued.poll()) != null) {
            ReferenceCountUtil.release(o);
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
