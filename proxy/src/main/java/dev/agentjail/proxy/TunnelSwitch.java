package dev.agentjail.proxy;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.audit.WebSocketDetails;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.inspect.ResponseScrubber;
import dev.agentjail.proxy.redact.Findings;
import dev.agentjail.proxy.ws.Extensions;
import dev.agentjail.proxy.ws.MessageRedaction;
import dev.agentjail.proxy.ws.WebSocketPipeline;
import dev.agentjail.proxy.ws.WsLedger;
import dev.agentjail.proxy.ws.WsViolation;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.timeout.IdleStateHandler;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
     * Turns a WebSocket exchange the upstream accepted into an inspecting message relay: answers the client's upgrade
     * with the upstream's 101 (scrubbed of this host's credentials) and replaces the HTTP handlers on both connections
     * by the WebSocket ones (TLS stays where there is TLS).
     */
    static void upgrade(
            ChannelHandlerContext ctx,
            UpstreamConnection upstream,
            Exchange ex,
            ProxyRuntime runtime,
            String clientAddress,
            HttpResponse response,
            Extensions extensions) {
        List<InjectedCredential> credentials = runtime.config().inspection().credentials().stream()
                .filter(c -> c.rule().appliesTo(ex.target))
                .toList();
        ResponseScrubber scrubber = credentials.isEmpty() ? null : ResponseScrubber.of(credentials);
        if (scrubber != null) {
            scrubber.scrub(response.headers());
        }
        byte[] answer = WebSockets.switchingProtocols(response);
        relay(ctx, upstream.channel(), ex, runtime, clientAddress, answer, upstream, (tunnel, client, up) -> {
            long idle = runtime.timeouts().tunnelIdle().toMillis();
            up.pipeline().addLast("ws-idle", new IdleStateHandler(0, 0, idle, TimeUnit.MILLISECONDS));
            WebSocketPipeline.install(
                    client,
                    up,
                    extensions,
                    new MessageRedaction(runtime.inspector(), ex.target),
                    scrubber,
                    tunnel,
                    new SecureRandom(),
                    WebSocketPipeline.MAX_MESSAGE);
        });
    }

    /** Adds the handlers that carry a tunnel's traffic both ways, at the end of both pipelines. */
    private interface Carrier {
        void install(Tunnel tunnel, Channel client, Channel upstream);
    }

    private static void relay(
            ChannelHandlerContext ctx,
            Channel upstream,
            Exchange ex,
            ProxyRuntime runtime,
            String clientAddress,
            byte[] answer,
            UpstreamConnection http) {
        relay(ctx, upstream, ex, runtime, clientAddress, answer, http, (tunnel, client, up) -> {
            up.pipeline().addLast(TunnelRelay.NAME, new TunnelRelay(client, tunnel, false));
            client.pipeline().addLast(TunnelRelay.NAME, new TunnelRelay(up, tunnel, true));
        });
    }

    private static void relay(
            ChannelHandlerContext ctx,
            Channel upstream,
            Exchange ex,
            ProxyRuntime runtime,
            String clientAddress,
            byte[] answer,
            UpstreamConnection http,
            Carrier carrier) {
        Channel client = ctx.channel();
        Tunnel tunnel = new Tunnel(ex, runtime, clientAddress);
        long idle = runtime.timeouts().tunnelIdle().toMillis();

        forBulk(client);
        forBulk(upstream);
        ChannelPipeline cp = client.pipeline();
        cp.addLast("tunnel-idle", new IdleStateHandler(0, 0, idle, TimeUnit.MILLISECONDS));
        if (http == null && runtime.tunnelled(ex.target)) {
            // A network.tunnel host: nothing reaches the upstream before the ClientHello names the CONNECT host, and
            // no later ClientHello (after a HelloRetryRequest, a renegotiation) passes unread.
            TunnelSniCheck gate = new TunnelSniCheck(
                    ex.target,
                    tunnel,
                    MAX_CLIENT_HELLO,
                    runtime.timeouts().header().toMillis(),
                    true);
            cp.addLast(TunnelSniCheck.NAME, gate);
            upstream.pipeline().addLast(ServerHelloWatch.NAME, new ServerHelloWatch(gate, false));
        }
        carrier.install(tunnel, client, upstream);
        if (http != null) {
            // Bytes the upstream sent right behind its 101 leave the decoder for the handlers just added.
            http.removeHttpHandlers();
        }
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
        ClientPipeline.uninstall(cp);
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

    /**
     * The shared state of one tunnel: its byte counts and whether its record was written; for a WebSocket also its
     * message counts and what was found in the client's messages, summed into the one {@code tunnel-close} record.
     */
    static final class Tunnel implements TunnelSniCheck.Refusal, WsLedger {
        private final Exchange ex;
        private final ProxyRuntime runtime;
        private final String client;
        private final Map<List<String>, Integer> wsFindings = new LinkedHashMap<>();
        long bytesOut;
        long bytesIn;
        private long messagesOut;
        private long messagesIn;
        private boolean websocket;
        private boolean recorded;

        Tunnel(Exchange ex, ProxyRuntime runtime, String client) {
            this.ex = ex;
            this.runtime = runtime;
            this.client = client;
        }

        /**
         * The tunnel's TLS check refused it: the record says why, and counts what was relayed before (nothing when the
         * first ClientHello was refused).
         */
        @Override
        public void refused(String reason, String detail) {
            if (!recorded) {
                record(AuditRecord.DENY, reason, detail);
            }
        }

        @Override
        public void closed() {
            if (!recorded) {
                record(AuditRecord.ALLOW, ex.allowReason, null);
            }
        }

        @Override
        public void message(boolean fromClient, long bytes) {
            websocket = true;
            if (fromClient) {
                messagesOut++;
                bytesOut += bytes;
            } else {
                messagesIn++;
                bytesIn += bytes;
            }
        }

        @Override
        public void findings(String location, List<Findings.Finding> found) {
            for (Findings.Finding f : found) {
                wsFindings.merge(List.of(f.kind(), location), f.count(), Integer::sum);
            }
        }

        @Override
        public void failed(WsViolation v, boolean clientAtFault) {
            websocket = true;
            if (!recorded) {
                String decision = v.denied() ? AuditRecord.DENY : AuditRecord.ERROR;
                record(decision, v.reason(), (clientAtFault ? "client sent " : "upstream sent ") + v.detail());
            }
        }

        private void record(String decision, String reason, String detail) {
            recorded = true;
            ex.bytesOut = bytesOut;
            ex.bytesIn = bytesIn;
            AuditRecord.Builder b = ex.record(runtime.session(), client, System.nanoTime())
                    .kind(AuditRecord.KIND_TUNNEL_CLOSE)
                    .decision(decision)
                    .reason(reason)
                    .error(detail);
            if (websocket) {
                List<RedactionCount> all = new ArrayList<>();
                if (ex.outbound != null) {
                    ex.outbound.findings().forEach(f -> all.add(new RedactionCount(f.kind(), f.location(), f.count())));
                }
                wsFindings.forEach((k, n) -> all.add(new RedactionCount(k.get(0), k.get(1), n)));
                b.redactions(all).websocket(new WebSocketDetails(messagesOut, messagesIn));
            }
            try {
                runtime.audit().append(b.build());
            } catch (AuditUnavailableException e) {
                // The sink is unhealthy and says so; new requests are refused until it recovers.
            }
        }
    }
}
