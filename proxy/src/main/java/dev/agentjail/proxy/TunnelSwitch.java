package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.timeout.IdleStateHandler;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Turns a client connection whose CONNECT was allowed and dialled into a raw byte tunnel: answers
 * 200, removes the HTTP handlers and relays bytes both ways. The request's record was written before
 * the 200; a {@code tunnel-close} record with the byte counts and duration follows when it closes.
 */
final class TunnelSwitch {
    private static final byte[] ESTABLISHED =
            "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private static final WriteBufferWaterMark TUNNEL_WATER_MARK = new WriteBufferWaterMark(256 * 1024, 1024 * 1024);
    private static final int TUNNEL_MAX_READ = 256 * 1024;

    private TunnelSwitch() {}

    /** How large a ClientHello a tunnel waits for before it refuses the connection. */
    private static final int MAX_CLIENT_HELLO = 16 * 1024;

    static void establish(
            ChannelHandlerContext ctx, Channel upstream, Exchange ex, ProxyRuntime runtime, String clientAddress) {
        ex.status = 200;
        relay(ctx, upstream, ex, runtime, clientAddress, ESTABLISHED, null);
    }

    /**
     * Turns a WebSocket exchange the upstream accepted into a byte relay: answers the client's upgrade with
     * the upstream's 101 and takes the HTTP handlers off both connections (TLS stays where there is TLS).
     */
    static void upgrade(
            ChannelHandlerContext ctx,
            UpstreamConnection upstream,
            Exchange ex,
            ProxyRuntime runtime,
            String clientAddress,
            byte[] switchingProtocols) {
        relay(ctx, upstream.channel(), ex, runtime, clientAddress, switchingProtocols, upstream);
    }

    private static void relay(
            ChannelHandlerContext ctx,
            Channel upstream,
            Exchange ex,
            ProxyRuntime runtime,
            String clientAddress,
            byte[] answer,
            UpstreamConnection http) {
        Channel client = ctx.channel();
        Tunnel tunnel = new Tunnel(ex, runtime, clientAddress);
        long idle = runtime.timeouts().tunnelIdle().toMillis();

        forBulk(client);
        forBulk(upstream);
        ChannelPipeline up = upstream.pipeline();
        up.addLast(TunnelRelay.NAME, new TunnelRelay(client, tunnel, false));
        if (http != null) {
            // Bytes the upstream sent right behind its 101 leave the decoder for the relay just added.
            http.removeHttpHandlers();
        }

        ChannelPipeline cp = client.pipeline();
        cp.addLast("tunnel-idle", new IdleStateHandler(0, 0, idle, TimeUnit.MILLISECONDS));
        if (http == null && runtime.tunnelled(ex.target)) {
            // A network.tunnel host: nothing reaches the upstream before the ClientHello names the CONNECT host.
            cp.addLast(
                    TunnelSniCheck.NAME,
                    new TunnelSniCheck(
                            ex.target,
                            tunnel,
                            MAX_CLIENT_HELLO,
                            runtime.timeouts().header().toMillis()));
        }
        cp.addLast(TunnelRelay.NAME, new TunnelRelay(upstream, tunnel, true));
        cp.remove(ProxyServer.TIMEOUTS);
        cp.remove(ProxyResponseEncoder.NAME);
        // Removing the decoder hands any bytes it still holds to the exchange handler, which holds them.
        cp.remove(StrictRequestDecoder.class);
        client.writeAndFlush(Unpooled.wrappedBuffer(answer));
        // Bytes the client sent early (e.g. a ClientHello) go first, in order, through the check and the relay.
        ByteBuf early;
        while ((early = (ByteBuf) ex.held.poll()) != null) {
            ctx.fireChannelRead(early);
        }
        ctx.fireChannelReadComplete();
        cp.remove(ExchangeHandler.NAME);
        upstream.config().setAutoRead(true);
        client.config().setAutoRead(true);
    }

    /**
     * A tunnel moves bulk bytes: bigger reads and a deeper write buffer mean fewer syscalls and fewer
     * read-interest toggles per megabyte. Intercepted tunnels get the same.
     */
    static void forBulk(Channel ch) {
        ch.config().setWriteBufferWaterMark(TUNNEL_WATER_MARK);
        ch.config().setRecvByteBufAllocator(new AdaptiveRecvByteBufAllocator(4096, 65536, TUNNEL_MAX_READ));
    }

    /** The shared state of one tunnel: its byte counts and whether its record was written. */
    static final class Tunnel implements TunnelSniCheck.Refusal {
        private final Exchange ex;
        private final ProxyRuntime runtime;
        private final String client;
        long bytesOut;
        long bytesIn;
        private boolean recorded;

        Tunnel(Exchange ex, ProxyRuntime runtime, String client) {
            this.ex = ex;
            this.runtime = runtime;
            this.client = client;
        }

        /** The tunnel was refused before any client byte reached the upstream: the record says why. */
        @Override
        public void refused(String reason, String detail) {
            if (recorded) {
                return;
            }
            recorded = true;
            ex.bytesOut = 0;
            ex.bytesIn = bytesIn;
            try {
                runtime.audit()
                        .append(ex.record(runtime.session(), client, System.nanoTime())
                                .kind(AuditRecord.KIND_TUNNEL_CLOSE)
                                .decision(AuditRecord.DENY)
                                .reason(reason)
                                .error(detail)
                                .build());
            } catch (AuditUnavailableException e) {
                // The sink is unhealthy and says so; new requests are refused until it recovers.
            }
        }

        void closed() {
            if (recorded) {
                return;
            }
            recorded = true;
            ex.bytesOut = bytesOut;
            ex.bytesIn = bytesIn;
            try {
                runtime.audit()
                        .append(ex.record(runtime.session(), client, System.nanoTime())
                                .kind(AuditRecord.KIND_TUNNEL_CLOSE)
                                .decision(AuditRecord.ALLOW)
                                .reason(ex.allowReason)
                                .build());
            } catch (AuditUnavailableException e) {
                // The sink is unhealthy and says so; new requests are refused until it recovers.
            }
        }
    }
}
