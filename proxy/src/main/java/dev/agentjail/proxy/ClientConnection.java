package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.http.MalformedRequest;
import dev.agentjail.proxy.mcp.McpExchange;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.function.Function;

/**
 * One client connection's state, shared by its {@link ExchangeHandler} (the request side) and its {@link
 * ResponseRelay}: the exchange in flight, the upstream connection kept for it, whether the connection is closing, and
 * the answers and records that end exchanges (a refusal, a completed response, a failure in flight). Lives on the
 * connection's event loop.
 */
final class ClientConnection {
    final ProxyRuntime runtime;
    final ProxyResponseEncoder encoder;
    private final RequestSequencer sequencer;

    ChannelHandlerContext ctx;
    /** The exchange in flight, or null. */
    Exchange current;
    /** The upstream connection of the exchange in flight, or kept for the next one; null when none. */
    UpstreamConnection upstream;
    /** The connection is closing: nothing more is read or answered. */
    boolean closing;

    private String clientAddress;
    private boolean clientAddressKnown;

    ClientConnection(ProxyRuntime runtime, ProxyResponseEncoder encoder, RequestSequencer sequencer) {
        this.runtime = runtime;
        this.encoder = encoder;
        this.sequencer = sequencer;
    }

    /** Changes the client's read interest only when it differs: each change costs a syscall. */
    void setAutoRead(boolean on) {
        var config = ctx.channel().config();
        if (config.isAutoRead() != on) {
            config.setAutoRead(on);
        }
    }

    /**
     * Answers a refused MCP message with its JSON-RPC error. Refused before anything was dialled, the connection stays
     * open if the body was read; found past the start of a body that streams on, the upstream connection is cut first,
     * so the end of the body never reaches it.
     */
    void refuseMcp(Exchange ex) {
        McpExchange m = ex.mcp;
        boolean streamed =
                ex.phase() instanceof Exchange.Phase.Dialing || ex.phase() instanceof Exchange.Phase.Forwarding;
        if (streamed && ex.responseStarted) {
            endInFlight(ex, AuditRecord.DENY, null, m.refusalReason(), m.refusalDetail());
            return;
        }
        if (streamed) {
            cutUpstream(ex);
        } else {
            ex.bytesOut = 0; // Refused before anything was dialled: nothing went upstream.
        }
        refuse(
                ex,
                AuditRecord.DENY,
                m.refusalStatus(),
                m.refusalReason(),
                m.refusalRule(),
                streamed || !ex.requestComplete,
                close -> m.refusal(ctx.alloc(), close));
        m.answerOnStream();
    }

    /**
     * Ends the exchange in flight on a failure: before its response started, the client gets {@code status} and
     * the exchange its record; after, the record says what went wrong and the connection closes, since a
     * half-sent response cannot be finished.
     */
    void endInFlight(Exchange ex, String decision, HttpResponseStatus status, String reason, String detail) {
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
    void cutUpstream(Exchange ex) {
        endMcp(ex);
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
    }

    void writeResponseHead(Exchange ex, HttpResponse response, boolean head) {
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

    void completeExchange(Exchange ex, LastHttpContent last) {
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

    void finishExchange(Exchange ex) {
        if (current == ex) {
            current = null;
        }
        resumeAfterExchange();
    }

    void resumeAfterExchange() {
        if (!closing) {
            // The next request waiting in the sequencer goes on, or the connection is idle.
            sequencer.exchangeDone();
        }
    }

    // ---- refusals ----

    void refuse(Exchange ex, String decision, HttpResponseStatus status, String reason, String line, boolean close) {
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
    void refuse(
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

    void refuseMalformed(MalformedRequest m) {
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

    void failInFlight(MalformedRequest m) {
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
    void refuseAuditUnavailable(Exchange ex) {
        refuse(
                ex,
                AuditRecord.ERROR,
                HttpResponseStatus.SERVICE_UNAVAILABLE,
                ProxyReasons.AUDIT_UNAVAILABLE,
                RequestIntake.AUDIT_UNAVAILABLE_DETAIL,
                true);
    }

    void closeNow() {
        closing = true;
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
        ctx.close();
    }

    /** The exchange's stream ended: a legacy session it opened ends with it (its message endpoint is closed). */
    static void endMcp(Exchange ex) {
        if (ex.mcp != null) {
            ex.mcp.end();
        }
    }

    void recordQuietly(AuditRecord record) {
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
    AuditRecord.Builder recordOf(Exchange ex) {
        return ex.record(runtime.session(), clientAddress(), System.nanoTime());
    }
}
