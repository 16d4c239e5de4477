package dev.agentjail.proxy;

import dev.agentjail.policy.Reasons;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.inspect.OutboundRequest;
import dev.agentjail.proxy.mcp.McpExchange;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.time.Instant;
import java.util.ArrayDeque;

/**
 * One request in flight on a client connection, from its head to its audit record. Lives on the
 * connection's event loop only.
 */
final class Exchange {
    /**
     * Where the exchange is: one of four states, changed only by {@link #to}, which refuses a step the exchange cannot
     * take (a refused exchange is never forwarded, a forwarded one never collected again).
     */
    sealed interface Phase {
        /** Its head is read and being decided on. */
        record Deciding() implements Phase {}

        /** An MCP message (or a body that may be one) is collected and decided before anything is dialled. */
        record Collecting() implements Phase {}

        /** Waiting for DNS, the SSRF guard and the upstream connection; body parts are held. */
        record Dialing() implements Phase {}

        /** Connected: body parts stream upstream, the response streams back. */
        record Forwarding() implements Phase {}

        /** Denied or rejected: the rest of the request body is read and dropped. */
        record Discarding() implements Phase {}

        /** Whether an exchange in this state may go to {@code next}. */
        default boolean mayGo(Phase next) {
            return switch (this) {
                case Deciding d -> !(next instanceof Deciding) && !(next instanceof Forwarding);
                case Collecting c -> next instanceof Dialing || next instanceof Discarding;
                case Dialing d -> next instanceof Forwarding || next instanceof Discarding;
                case Forwarding f -> next instanceof Discarding;
                case Discarding d -> next instanceof Discarding;
            };
        }
    }

    static final Phase DECIDING = new Phase.Deciding();
    static final Phase COLLECTING = new Phase.Collecting();
    static final Phase DIALING = new Phase.Dialing();
    static final Phase FORWARDING = new Phase.Forwarding();
    static final Phase DISCARDING = new Phase.Discarding();

    final HttpRequest request;
    final Instant started;
    final long startNanos;
    final Target target;
    final String scheme;
    String path;
    final boolean connect;
    final boolean clientKeepAlive;
    final boolean expectContinue;
    final String rule;

    /** The reason an allowed exchange is recorded with: {@code allowed}, or {@code would-deny} in report mode. */
    String allowReason = Reasons.ALLOWED;

    final ArrayDeque<Object> held = new ArrayDeque<>();

    private Phase phase;
    boolean requestComplete;
    boolean responseStarted;
    boolean closeAfter;
    int status;
    long bytesOut;
    long bytesIn;
    InetAddress dialled;
    String error;
    /** A WebSocket opening handshake: the Upgrade is forwarded, and a 101 turns the exchange into a relay. */
    boolean websocket;
    /** A CONNECT whose tunnel is opened (TLS intercepted) rather than relayed as bytes. */
    boolean intercepted;
    /** The request as it goes upstream (redacted, credentials injected); null until it is allowed. */
    OutboundRequest outbound;
    /** The MCP inspection of this exchange; null when it needs none. */
    McpExchange mcp;
    /** A 100 Continue went to the client already (while the body was collected). */
    boolean continueSent;

    Exchange(
            HttpRequest request,
            Instant started,
            long startNanos,
            Target target,
            String scheme,
            String path,
            boolean connect,
            boolean clientKeepAlive,
            boolean expectContinue,
            String rule,
            Phase phase) {
        this.request = request;
        this.started = started;
        this.startNanos = startNanos;
        this.target = target;
        this.scheme = scheme;
        this.path = path;
        this.connect = connect;
        this.clientKeepAlive = clientKeepAlive;
        this.expectContinue = expectContinue;
        this.rule = rule;
        this.phase = phase;
    }

    Phase phase() {
        return phase;
    }

    boolean discarding() {
        return phase instanceof Phase.Discarding;
    }

    /** Moves the exchange to {@code next}; a step it cannot take is a bug, never a silent change. */
    void to(Phase next) {
        if (!phase.mayGo(next)) {
            throw new IllegalStateException("exchange cannot go from " + phase + " to " + next);
        }
        phase = next;
    }

    /** The audit record of this exchange so far; the caller adds the decision and outcome. */
    AuditRecord.Builder record(String session, String client, long nowNanos) {
        AuditRecord.Builder b = AuditRecord.builder()
                .ts(started)
                .session(session)
                .method(request.method().name())
                .scheme(scheme)
                .path(path)
                .rule(rule)
                .status(status)
                .bytesOut(bytesOut)
                .bytesIn(bytesIn)
                .durationMs((nowNanos - startNanos) / 1_000_000)
                .tls(tlsMode())
                .client(client);
        if (target != null) {
            b.host(target.host()).port(target.port());
        }
        if (error != null) {
            b.error(error);
        }
        if (dialled != null) {
            b.resolvedIp(dialled.getHostAddress());
        }
        if (mcp != null) {
            b.mcp(mcp.details());
        }
        if (outbound != null && !outbound.findings().isEmpty()) {
            b.redactions(outbound.findings().stream()
                    .map(f -> new RedactionCount(f.kind(), f.location(), f.count()))
                    .toList());
        }
        return b;
    }

    private String tlsMode() {
        if (connect) {
            return status != 200
                    ? AuditRecord.TLS_NONE
                    : intercepted ? AuditRecord.TLS_INTERCEPT : AuditRecord.TLS_TUNNEL;
        }
        return AuditRecord.SCHEME_HTTPS.equals(scheme) ? AuditRecord.TLS_INTERCEPT : AuditRecord.TLS_NONE;
    }

    void releaseHeld() {
        Object o;
        while ((o = held.poll()) != null) {
            ReferenceCountUtil.release(o);
        }
    }

    static boolean isLast(Object msg) {
        return msg instanceof io.netty.handler.codec.http.LastHttpContent;
    }

    static long size(HttpContent c) {
        return c.content().readableBytes();
    }
}
