package dev.agentjail.proxy;

import dev.agentjail.policy.Target;
import dev.agentjail.proxy.tls.UpstreamTls;
import dev.agentjail.proxy.ws.Handshake;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
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
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * One HTTP connection to an upstream (plain, or TLS verified by {@link UpstreamTls} for intercepted
 * tunnels), owned by one client connection and pinned to its event loop: sends the rewritten
 * request, relays the response back, and is reused only for the same canonical target after a
 * clean, kept-alive exchange.
 */
final class UpstreamConnection {
    private static final String CODEC = "upstream-codec";
    private static final String IDLE = "upstream-idle";
    private static final String RELAY = "upstream-relay";
    private static final String TLS = "upstream-tls";
    private static final String DELIVERY = "upstream-delivery";

    private final Target target;
    private final ProxyRuntime runtime;
    private final UpstreamTls tls;

    private ResponseRelay owner;

    private Channel channel;
    private boolean inExchange;
    private boolean reusable;
    private boolean headRequest;
    private boolean skippingInformational;
    private boolean upgradeExpected;
    /** The exchange this connection answers while {@link #inExchange}. */
    private Exchange exchange;

    UpstreamConnection(ResponseRelay owner, Target target, ProxyRuntime runtime, UpstreamTls tls) {
        this.owner = owner;
        this.target = target;
        this.runtime = runtime;
        this.tls = tls;
    }

    /**
     * A connection dialled ahead of its first request (an intercepted tunnel's upstream, whose TLS
     * handshake runs while the client's does): fresh, so the first request to its target may use it.
     */
    static UpstreamConnection spare(Channel ch, Target target, ProxyRuntime runtime, UpstreamTls tls) {
        UpstreamConnection conn = new UpstreamConnection(null, target, runtime, tls);
        conn.initPipeline(ch);
        conn.attach(ch);
        conn.reusable = true;
        return conn;
    }

    /** Hands a spare connection to the client connection that will use it. */
    void adopt(ResponseRelay handler) {
        this.owner = handler;
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
        if (tls != null) {
            TunnelSwitch.forBulk(ch);
            ch.pipeline().addLast(TLS, tls.newHandler(ch.alloc(), target));
        }
        ch.pipeline()
                .addLast(CODEC, new HttpClientCodec(config, false, false))
                .addLast(IDLE, new IdleStateHandler(idle, 0, 0, TimeUnit.MILLISECONDS))
                .addLast(RELAY, new Relay())
                .addLast(McpResponseFilter.NAME, new McpResponseFilter(this::exchange))
                .addLast(ResponseScrubbing.NAME, new ResponseScrubbing(this::exchange))
                .addLast(DELIVERY, new Delivery());
    }

    /** The exchange being answered, or null between exchanges. */
    private Exchange exchange() {
        return inExchange ? exchange : null;
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

    /** Takes the exchange: from now on the connection answers it, even before its head is written. */
    void begin(Exchange ex) {
        inExchange = true;
        exchange = ex;
        reusable = false;
        headRequest = ex.request.method().equals(HttpMethod.HEAD);
        upgradeExpected = ex.websocket;
    }

    Channel channel() {
        return channel;
    }

    /** After an accepted WebSocket upgrade: the connection becomes a byte pipe (TLS, if any, stays). */
    void removeHttpHandlers() {
        inExchange = false;
        reusable = false;
        ChannelPipeline p = channel.pipeline();
        p.remove(DELIVERY);
        p.remove(ResponseScrubbing.NAME);
        p.remove(McpResponseFilter.NAME);
        p.remove(RELAY);
        p.remove(IDLE);
        p.remove(CODEC);
    }

    /**
     * Writes the request head as the inspection left it (secrets replaced, credentials injected), in
     * origin-form with a canonical Host and no hop-by-hop headers.
     */
    void sendHead(Exchange ex) {
        HttpHeaders headers = ex.outbound.headers();
        HopByHop.strip(headers);
        headers.remove(HttpHeaderNames.EXPECT);
        if (ex.websocket) {
            headers.set(HttpHeaderNames.CONNECTION, "Upgrade");
            headers.set(HttpHeaderNames.UPGRADE, "websocket");
            // Only extensions the proxy can read are offered, so the upstream can negotiate no other.
            Handshake.filterOffer(headers);
        }
        headers.remove(HttpHeaderNames.HOST);
        int defaultPort = tls != null ? 443 : 80;
        headers.set(HttpHeaderNames.HOST, target.port() == defaultPort ? target.uriHost() : target.authority());
        HttpRequest forwarded =
                new DefaultHttpRequest(HttpVersion.HTTP_1_1, ex.request.method(), ex.outbound.originForm(), headers);
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

    /**
     * The last stage: hands the response, as the inspection stages left it, to the owning client connection; a
     * refusal by a stage ends the exchange there.
     */
    private final class Delivery extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!inExchange) {
                // The exchange ended on something before this (a refusal): the rest of its response goes nowhere.
                ReferenceCountUtil.release(msg);
            } else if (msg instanceof ExchangeSignal.ResponseRefused refused) {
                owner.onResponseRefused(refused);
            } else if (msg instanceof HttpResponse response) {
                owner.onResponseHead(response, headRequest);
            } else {
                owner.onResponseContent((HttpContent) msg);
            }
        }
    }

    /** Frames the upstream's response objects: informational answers, upgrades, keep-alive and re-framing. */
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
                if (upgradeExpected && WebSockets.isAccepted(response)) {
                    ReferenceCountUtil.release(msg);
                    owner.onUpgraded(response);
                    return;
                }
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
                if (msg instanceof HttpContent content) {
                    // One object for head and body: the stages after this one take them apart.
                    ctx.fireChannelRead(
                            new DefaultHttpResponse(response.protocolVersion(), response.status(), response.headers()));
                    if (inExchange) {
                        ctx.fireChannelRead(new DefaultLastHttpContent(content.content()));
                    } else {
                        content.release();
                    }
                    return;
                }
                ctx.fireChannelRead(response);
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
            ctx.fireChannelRead(content);
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
            if (evt instanceof SslHandshakeCompletionEvent done && !done.isSuccess()) {
                tlsFailed(done.cause());
                return;
            }
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
            if (tls != null && isTls(cause)) {
                tlsFailed(cause);
                return;
            }
            if (inExchange) {
                fail(HttpResponseStatus.BAD_GATEWAY, ProxyReasons.UPSTREAM_PROTOCOL_ERROR, "upstream error");
            } else {
                close();
            }
        }

        /** Verification or handshake failure: the request (still queued in the SslHandler) is never delivered. */
        private void tlsFailed(Throwable cause) {
            Throwable root = cause;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            fail(
                    HttpResponseStatus.BAD_GATEWAY,
                    ProxyReasons.UPSTREAM_TLS_FAILED,
                    "TLS with " + target.authority() + " failed: " + root.getMessage());
        }

        private static boolean isTls(Throwable cause) {
            for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof SSLException) {
                    return true;
                }
            }
            return false;
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
