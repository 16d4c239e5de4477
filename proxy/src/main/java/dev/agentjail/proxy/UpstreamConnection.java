package dev.agentjail.proxy;

import dev.agentjail.policy.Target;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.TimeUnit;

/**
 * One plain-HTTP connection to an upstream, owned by one client connection and pinned to its event
 * loop: sends the rewritten request, relays the response back, and is reused only for the same
 * canonical target after a clean, kept-alive exchange.
 */
final class UpstreamConnection {
    private static final String CODEC = "upstream-codec";
    private static final String IDLE = "upstream-idle";
    private static final String RELAY = "upstream-relay";

    private final ExchangeHandler owner;
    private final Target target;
    private final ProxyRuntime runtime;

    private Channel channel;
    private boolean inExchange;
    private boolean reusable;
    private boolean headRequest;
    private boolean skippingInformational;

    UpstreamConnection(ExchangeHandler owner, Target target, ProxyRuntime runtime) {
        this.owner = owner;
        this.target = target;
        this.runtime = runtime;
    }

    void initPipeline(Channel ch) {
        HttpDecoderConfig config = new HttpDecoderConfig()
                .setMaxInitialLineLength(16 * 1024)
                .setMaxHeaderSize(64 * 1024)
                .setMaxChunkSize(64 * 1024)
                .setAllowDuplicateContentLengths(false)
                .setAllowPartialChunks(true)
                .setStrictLineParsing(true)
                .setUseRfc9112TransferEncoding(true);
        long idle = runtime.timeouts().upstreamIdle().toMillis();
        ch.pipeline()
                .addLast(CODEC, new HttpClientCodec(config, false, false))
                .addLast(IDLE, new IdleStateHandler(idle, 0, 0, TimeUnit.MILLISECONDS))
                .addLast(RELAY, new Relay());
    }

    void attach(Channel ch) {
        this.channel = ch;
        ch.config().setAutoRead(true);
    }

    boolean reusableFor(Target t) {
        return reusable && !inExchange && channel != null && channel.isActive() && target.equals(t);
    }

    boolean writable() {
        return channel.isWritable();
    }

    /** Writes the request head, rewritten to origin-form with a canonical Host and no hop-by-hop headers. */
    void send(Exchange ex) {
        inExchange = true;
        reusable = false;
        headRequest = ex.request.method().equals(HttpMethod.HEAD);
        HttpHeaders headers = ex.request.headers().copy();
        HopByHop.strip(headers);
        headers.remove(HttpHeaderNames.EXPECT);
        headers.remove(HttpHeaderNames.HOST);
        headers.set(HttpHeaderNames.HOST, target.port() == 80 ? target.uriHost() : target.authority());
        HttpRequest forwarded = new DefaultHttpRequest(
                HttpVersion.HTTP_1_1, ex.request.method(), originForm(ex.request.uri()), headers);
        channel.write(forwarded);
    }

    void write(HttpContent content, boolean last) {
        if (last) {
            channel.writeAndFlush(content);
        } else {
            channel.write(content);
        }
    }

    void flush() {
        channel.flush();
    }

    void pauseReading() {
        channel.config().setAutoRead(false);
    }

    void resumeReading() {
        if (channel != null) {
            channel.config().setAutoRead(true);
        }
    }

    /** The exchange ended cleanly; keep the connection for the next request to the same target, if it may be reused. */
    void released() {
        inExchange = false;
        if (!reusable) {
            close();
        }
    }

    void close() {
        inExchange = false;
        reusable = false;
        if (channel != null) {
            channel.close();
        }
    }

    /** The request-target in origin-form: path and query of an absolute-form URI, "/" when empty. */
    static String originForm(String absolute) {
        int schemeEnd = absolute.indexOf("://");
        int from = schemeEnd < 0 ? 0 : schemeEnd + 3;
        for (int i = from; i < absolute.length(); i++) {
            char c = absolute.charAt(i);
            if (c == '/') {
                return absolute.substring(i);
            }
            if (c == '?') {
                return "/" + absolute.substring(i);
            }
        }
        return "/";
    }

    /** Relays the upstream's response objects to the owning client connection. */
    private final class Relay extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!inExchange) {
                // Bytes nobody asked for: the connection can't be trusted for another request.
                ReferenceCountUtil.release(msg);
                close();
                return;
            }
            HttpObject obj = (HttpObject) msg;
            if (obj.decoderResult().isFailure()) {
                ReferenceCountUtil.release(msg);
                fail(
                        HttpResponseStatus.BAD_GATEWAY,
                        ProxyReasons.UPSTREAM_PROTOCOL_ERROR,
                        "malformed upstream response");
                return;
            }
            if (msg instanceof HttpResponse response) {
                if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                    ReferenceCountUtil.release(msg);
                    if (response.status().code() == 101) {
                        fail(
                                HttpResponseStatus.BAD_GATEWAY,
                                ProxyReasons.UPSTREAM_PROTOCOL_ERROR,
                                "unexpected protocol switch from upstream");
                        return;
                    }
                    skippingInformational = true;
                    return;
                }
                boolean mayHaveBody = !headRequest
                        && response.status().code() != 204
                        && response.status().code() != 304;
                // Bytes an upstream sends after a response that can't have a body would stay in the decoder and
                // answer the next request: such a connection is not reused.
                reusable = HttpUtil.isKeepAlive(response) && mayHaveBody;
                HopByHop.strip(response.headers());
                if (mayHaveBody
                        && !HttpUtil.isContentLengthSet(response)
                        && !HttpUtil.isTransferEncodingChunked(response)) {
                    // Delimited by close upstream; re-frame as chunked so the client connection survives.
                    HttpUtil.setTransferEncodingChunked(response, true);
                }
                owner.onResponseHead(response, headRequest);
                if (msg instanceof HttpContent content) {
                    owner.onResponseContent(content);
                }
                return;
            }
            HttpContent content = (HttpContent) msg;
            if (skippingInformational) {
                content.release();
                if (content instanceof LastHttpContent) {
                    skippingInformational = false;
                }
                return;
            }
            owner.onResponseContent(content);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (inExchange) {
                owner.onUpstreamReadComplete();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                owner.onUpstreamWritable();
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                if (inExchange) {
                    fail(
                            HttpResponseStatus.GATEWAY_TIMEOUT,
                            ProxyReasons.UPSTREAM_TIMEOUT,
                            "upstream did not answer in time");
                } else {
                    close();
                }
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (inExchange) {
                fail(
                        HttpResponseStatus.BAD_GATEWAY,
                        ProxyReasons.UPSTREAM_CLOSED,
                        "upstream closed the connection before the response completed");
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (inExchange) {
                fail(HttpResponseStatus.BAD_GATEWAY, ProxyReasons.UPSTREAM_PROTOCOL_ERROR, "upstream error");
            } else {
                close();
            }
        }

        private void fail(HttpResponseStatus status, String reason, String detail) {
            boolean was = inExchange;
            close();
            if (was) {
                owner.onUpstreamFailure(status, reason, detail);
            }
        }
    }
}
