package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.mcp.McpAnswer;
import dev.agentjail.proxy.mcp.McpErrors;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.function.Supplier;

/**
 * The response stage that filters what an approved MCP server answers, before any of it reaches the client: every
 * response an MCP client would read goes through the filter ({@link McpAnswer#onResponseHead} decides how), a JSON
 * answer collected whole and sent with its new length, an event stream event by event; a response a client could act
 * on but that cannot be filtered is refused ({@link ExchangeSignal.ResponseRefused}, 502). Responses to anything else
 * pass as they are.
 */
final class McpResponseFilter extends ChannelInboundHandlerAdapter {
    static final String NAME = "mcp-response-filter";

    private final Supplier<Exchange> exchange;

    /** {@code exchange}: the exchange the upstream connection is answering. */
    McpResponseFilter(Supplier<Exchange> exchange) {
        this.exchange = exchange;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Exchange ex = exchange.get();
        McpAnswer m = ex == null || ex.mcp == null ? null : ex.mcp.answer();
        if (m == null || msg instanceof ExchangeSignal) {
            ctx.fireChannelRead(msg);
        } else if (msg instanceof HttpResponse head) {
            head(ctx, ex, m, head);
        } else if (msg instanceof HttpContent content) {
            switch (m.responseMode()) {
                case PASS -> ctx.fireChannelRead(content);
                case SSE -> sse(ctx, ex, m, content);
                case JSON -> json(ctx, ex, m, content);
                case REFUSE -> content.release();
            }
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    private static void head(ChannelHandlerContext ctx, Exchange ex, McpAnswer m, HttpResponse head) {
        switch (m.onResponseHead(head)) {
            case REFUSE ->
                // Nothing of it reaches the client: the upstream connection is cut, the client gets a 502.
                ctx.fireChannelRead(new ExchangeSignal.ResponseRefused(
                        ex, AuditRecord.DENY, HttpResponseStatus.BAD_GATEWAY, m.responseReason(), m.responseProblem()));
            case JSON -> {} // Held back until the body is filtered: its length changes.
            case PASS, SSE -> ctx.fireChannelRead(head);
        }
    }

    private static void sse(ChannelHandlerContext ctx, Exchange ex, McpAnswer m, HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        ByteBuf out = m.filterSse(content.content(), last, ctx.alloc());
        content.release();
        if (out == null) {
            ctx.fireChannelRead(new ExchangeSignal.ResponseRefused(
                    ex, m.streamDecision(), HttpResponseStatus.BAD_GATEWAY, m.streamReason(), m.streamProblem()));
        } else if (last) {
            ctx.fireChannelRead(new DefaultLastHttpContent(out));
        } else if (out.isReadable()) {
            ctx.fireChannelRead(new DefaultHttpContent(out));
        } else {
            out.release();
        }
    }

    private static void json(ChannelHandlerContext ctx, Exchange ex, McpAnswer m, HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        if (!m.collectResponse(content)) {
            ctx.fireChannelRead(new ExchangeSignal.ResponseRefused(
                    ex, AuditRecord.ERROR, HttpResponseStatus.BAD_GATEWAY, m.responseReason(), m.responseProblem()));
            return;
        }
        if (!last) {
            return;
        }
        byte[] body = m.filteredResponse();
        if (body == null) {
            String decision =
                    McpErrors.REASON_UNINSPECTABLE.equals(m.responseReason()) ? AuditRecord.ERROR : AuditRecord.DENY;
            ctx.fireChannelRead(new ExchangeSignal.ResponseRefused(
                    ex, decision, HttpResponseStatus.BAD_GATEWAY, m.responseReason(), m.responseProblem()));
            return;
        }
        HttpResponse head = m.heldHead();
        head.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
        head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        ctx.fireChannelRead(head);
        ctx.fireChannelRead(new DefaultLastHttpContent(Unpooled.wrappedBuffer(body)));
    }
}
