package dev.agentjail.proxy;

import dev.agentjail.policy.Decision;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.inspect.OutboundRequest;
import dev.agentjail.proxy.mcp.McpExchange;
import dev.agentjail.proxy.route.Router;
import dev.agentjail.proxy.route.Routing;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.time.Instant;

/**
 * The pipeline stage that turns a request head into an {@link Exchange} and the verdict on it: the audit log must be writable,
 * the target must route, the policy must allow it, its inspection must not refuse it, and its Expect
 * must be one the proxy handles. Everything that decides before a byte goes anywhere is here; the
 * exchange handler acts on the outcome.
 */
final class RequestIntake extends ChannelInboundHandlerAdapter {
    static final String NAME = "intake";

    /** What to do with a new request. */
    sealed interface Outcome {
        Exchange exchange();
    }

    /** Go ahead: dial (or reuse) the upstream and forward. */
    record Admitted(Exchange exchange) implements Outcome {}

    /** Answer with {@code status} and a record of {@code decision}, {@code reason} and {@code detail}. */
    record Refused(
            Exchange exchange, String decision, HttpResponseStatus status, String reason, String detail, boolean close)
            implements Outcome {}

    static final String AUDIT_UNAVAILABLE_DETAIL = "the audit log cannot be written; no request is served until it can";

    private final ProxyRuntime runtime;
    private final Router router;

    RequestIntake(ProxyRuntime runtime, Router router) {
        this.runtime = runtime;
        this.router = router;
    }

    /** A request head becomes its {@link Outcome}, passed on in its place; everything else passes as it is. */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ctx.fireChannelRead(msg instanceof HttpRequest request ? admit(request) : msg);
    }

    Outcome admit(HttpRequest request) {
        long startNanos = System.nanoTime();
        Instant started = runtime.clock().instant();
        if (!runtime.audit().healthy()) {
            // Fail closed: while the audit log cannot be written, nothing is served.
            return new Refused(
                    exchange(request, started, startNanos, null, null, null, false, "-"),
                    AuditRecord.ERROR,
                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                    ProxyReasons.AUDIT_UNAVAILABLE,
                    AUDIT_UNAVAILABLE_DETAIL,
                    true);
        }
        Routing routing = router.route(request);
        if (routing instanceof Routing.Rejected r) {
            return new Refused(
                    exchange(request, started, startNanos, null, null, null, false, "-"),
                    AuditRecord.ERROR,
                    r.status(),
                    r.reason(),
                    r.detail(),
                    true);
        }
        Routing.Routed routed = (Routing.Routed) routing;
        java.util.Optional<String> secretHost =
                runtime.inspector().secretInHost(writtenHost(request, routed), routed.target());
        if (secretHost.isPresent()) {
            // Denied before any DNS query or dial: the name itself would carry the secret out; logged redacted.
            Target redacted = new Target(
                    secretHost.get(), routed.target().kind(), routed.target().port());
            return new Refused(
                    exchange(request, started, startNanos, redacted, routed.scheme(), null, routed.connect(), "-"),
                    AuditRecord.DENY,
                    HttpResponseStatus.FORBIDDEN,
                    ProxyReasons.SECRET_IN_HOST,
                    "the host name carries a secret; it is never resolved or dialled",
                    true);
        }
        Decision decision = routed.decision();
        OutboundRequest outbound = null;
        String path = null;
        if (routed.originForm() != null) {
            if (decision.allowed()) {
                outbound = runtime.inspector()
                        .inspect(request, routed.target(), routed.originForm(), "https".equals(routed.scheme()));
                path = outbound.recordPath();
            } else {
                // Even a refused request's path goes into the log: never with a secret in it.
                path = stripQuery(runtime.inspector().redactedTarget(routed.originForm()));
            }
        }
        Exchange ex = exchange(
                request,
                started,
                startNanos,
                routed.target(),
                routed.scheme(),
                path,
                routed.connect(),
                decision.rule());
        ex.outbound = outbound;
        // "allowed", or "would-deny" in report mode: the record says which.
        ex.allowReason = decision.reason();
        if (!decision.allowed()) {
            return new Refused(
                    ex,
                    AuditRecord.DENY,
                    HttpResponseStatus.FORBIDDEN,
                    decision.reason(),
                    routed.detail() != null ? routed.detail() : describe(ex) + " denied by policy",
                    routed.connect() || hasBody(request) || router.closeOnDeny());
        }
        if (outbound != null && outbound.refused()) {
            if (ProxyReasons.UNINSPECTABLE_BODY.equals(outbound.refusalReason())) {
                // An approved MCP endpoint answers a body in a charset it does not read in MCP terms: a JSON-RPC
                // error, which MCP clients report as the call's error.
                McpExchange mcp = McpExchange.start(
                        runtime.mcp(), request, routed.scheme(), routed.target(), routed.originForm());
                if (mcp != null && mcp.refusedForCharset(request)) {
                    ex.mcp = mcp;
                    return new Refused(
                            ex, AuditRecord.DENY, mcp.refusalStatus(), mcp.refusalReason(), mcp.refusalDetail(), true);
                }
            }
            return new Refused(
                    ex,
                    AuditRecord.DENY,
                    outbound.refusalStatus(),
                    outbound.refusalReason(),
                    outbound.refusalDetail(),
                    true);
        }
        String expect = request.headers().get(HttpHeaderNames.EXPECT);
        if (expect != null && !expect.equalsIgnoreCase("100-continue")) {
            return new Refused(
                    ex,
                    AuditRecord.ERROR,
                    HttpResponseStatus.EXPECTATION_FAILED,
                    ProxyReasons.EXPECTATION_FAILED,
                    "unsupported Expect value",
                    true);
        }
        ex.websocket = WebSockets.isUpgradeRequest(request);
        if (outbound != null) {
            // MCP: requests to an approved endpoint (a server's url, or the message endpoint of an open legacy
            // session, which has a query), and POST bodies anywhere else, are looked at as JSON-RPC.
            ex.mcp = McpExchange.start(runtime.mcp(), request, routed.scheme(), routed.target(), routed.originForm());
            if (ex.mcp != null && ex.mcp.refusedFromHead(request, ex.websocket)) {
                // The exchange handler answers with the MCP refusal's JSON-RPC error.
                return new Refused(
                        ex,
                        AuditRecord.DENY,
                        ex.mcp.refusalStatus(),
                        ex.mcp.refusalReason(),
                        ex.mcp.refusalDetail(),
                        true);
            }
            if (ex.mcp != null) {
                ex.mcp.shapeOutbound(outbound.headers());
            }
        }
        return new Admitted(ex);
    }

    /**
     * The host as the request wrote it, case kept: a CONNECT's authority, an absolute-form target's, or (inside an
     * intercepted tunnel, origin-form) the Host header; without its port.
     */
    static String writtenHost(HttpRequest request, Routing.Routed routed) {
        String uri = request.uri();
        String authority;
        if (routed.connect()) {
            authority = uri;
        } else if (uri.regionMatches(true, 0, "http://", 0, 7)) {
            int end = 7;
            while (end < uri.length() && "/?#".indexOf(uri.charAt(end)) < 0) {
                end++;
            }
            authority = uri.substring(7, end);
        } else {
            String host = request.headers().get(HttpHeaderNames.HOST);
            authority = host == null ? routed.target().host() : host;
        }
        int colon = authority.lastIndexOf(':');
        return colon > 0 && authority.indexOf(']') < colon ? authority.substring(0, colon) : authority;
    }

    /** How a refusal names the request to the agent: {@code CONNECT host:port} or {@code GET https://host}. */
    static String describe(Exchange ex) {
        return (ex.connect ? "CONNECT " : ex.request.method().name() + " " + ex.scheme + "://") + ex.target.authority();
    }

    private static Exchange exchange(
            HttpRequest request,
            Instant started,
            long startNanos,
            Target target,
            String scheme,
            String path,
            boolean connect,
            String rule) {
        boolean keepAlive = HttpUtil.isKeepAlive(request) && !connect;
        boolean expectContinue = HttpUtil.is100ContinueExpected(request);
        return new Exchange(
                request,
                started,
                startNanos,
                target,
                scheme,
                path,
                connect,
                keepAlive,
                expectContinue,
                rule,
                Exchange.DECIDING);
    }

    private static boolean hasBody(HttpRequest request) {
        return dev.agentjail.proxy.inspect.OutboundRequest.hasBody(request);
    }

    private static String stripQuery(String originForm) {
        int q = originForm.indexOf('?');
        return q < 0 ? originForm : originForm.substring(0, q);
    }
}
