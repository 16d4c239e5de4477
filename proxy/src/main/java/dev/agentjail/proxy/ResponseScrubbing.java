package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.inspect.ResponseScrubber;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.function.Supplier;

/**
 * The response stage that keeps an injected credential from coming back: the response to a request that carried one
 * has the real value swapped back to its placeholder in the status line's reason phrase and in every header, body
 * part and trailer, as it streams. It runs last, after every stage that may rewrite the response (the MCP filter
 * writes the messages it parses anew, with their escapes decoded), so it sees the bytes the client gets. A response
 * whose body is encoded (any {@code Content-Encoding} but identity, any transfer-coding but chunked) cannot be scrubbed
 * as it streams and is refused ({@link ExchangeSignal.ResponseRefused}): the request asked for identity.
 */
final class ResponseScrubbing extends ChannelInboundHandlerAdapter {
    static final String NAME = "response-scrubbing";

    private final Supplier<Exchange> exchange;

    /** {@code exchange}: the exchange the upstream connection is answering. */
    ResponseScrubbing(Supplier<Exchange> exchange) {
        this.exchange = exchange;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Exchange ex = exchange.get();
        ResponseScrubber scrubber = ex == null || ex.outbound == null
                ? null
                : ex.outbound.scrubber().orElse(null);
        if (scrubber == null) {
            ctx.fireChannelRead(msg);
        } else if (msg instanceof HttpResponse response) {
            String coding = coding(response.headers());
            if (coding != null) {
                ctx.fireChannelRead(new ExchangeSignal.ResponseRefused(
                        ex,
                        AuditRecord.DENY,
                        HttpResponseStatus.BAD_GATEWAY,
                        ProxyReasons.CREDENTIAL_RESPONSE_ENCODED,
                        "the response to a request carrying an injected credential came encoded (" + coding.strip()
                                + "), which the proxy cannot scrub of the credential"));
                return;
            }
            scrubber.scrub(response.headers());
            String reason = response.status().reasonPhrase();
            String scrubbed = scrubber.scrub(reason, "");
            if (!scrubbed.equals(reason)) {
                // The reason phrase is text a client shows too.
                response.setStatus(new HttpResponseStatus(response.status().code(), scrubbed));
            }
            ctx.fireChannelRead(response);
        } else if (msg instanceof HttpContent content) {
            ctx.fireChannelRead(scrub(scrubber, content, ctx));
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    /** The line naming a coding a client would decode, or null: every line of both headers is read. */
    static String coding(HttpHeaders headers) {
        String coding = null;
        for (String line : headers.getAll(HttpHeaderNames.CONTENT_ENCODING)) {
            coding = codingIn(line, "identity", coding);
        }
        for (String line : headers.getAll(HttpHeaderNames.TRANSFER_ENCODING)) {
            coding = codingIn(line, "chunked", coding);
        }
        return coding;
    }

    private static String codingIn(String line, String harmless, String before) {
        for (String c : line.split(",")) {
            if (!c.isBlank() && !c.strip().equalsIgnoreCase(harmless)) {
                return line;
            }
        }
        return before;
    }

    private static HttpContent scrub(ResponseScrubber scrubber, HttpContent content, ChannelHandlerContext ctx) {
        boolean isLast = content instanceof LastHttpContent;
        HttpHeaders trailers = isLast ? ((LastHttpContent) content).trailingHeaders() : null;
        ByteBuf scrubbed = scrubber.scrub(content.content(), isLast, ctx.alloc());
        if (!isLast) {
            return new DefaultHttpContent(scrubbed);
        }
        DefaultLastHttpContent last = new DefaultLastHttpContent(scrubbed);
        last.trailingHeaders().set(trailers);
        scrubber.scrub(last.trailingHeaders());
        return last;
    }
}
