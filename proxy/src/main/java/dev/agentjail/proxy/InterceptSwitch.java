package dev.agentjail.proxy;

import dev.agentjail.policy.Target;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.route.TunnelRouter;
import dev.agentjail.proxy.tls.Interception;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SniHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.util.AsyncMapping;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a client connection whose CONNECT was allowed and dialled into an intercepted tunnel: answers
 * 200, terminates the client's TLS with a certificate our CA minted for the CONNECT host (refusing a
 * ClientHello that names another server), and serves the requests inside with a fresh HTTP pipeline
 * whose router insists on the tunnel's origin. The upstream's own TLS handshake starts at once, so
 * it runs while the client's does.
 */
final class InterceptSwitch {
    static final String TLS = "tls";

    private static final byte[] ESTABLISHED =
            "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /** A ClientHello is a few hundred bytes; a few kilobytes covers every real one (corpus case 114). */
    private static final int MAX_CLIENT_HELLO = 16 * 1024;

    private InterceptSwitch() {}

    static void establish(
            ChannelHandlerContext ctx, Channel upstream, Exchange ex, ProxyRuntime runtime, String clientAddress) {
        Channel client = ctx.channel();
        Interception interception = runtime.config().interception();
        Target target = ex.target;
        UpstreamConnection spare = UpstreamConnection.spare(upstream, target, runtime, interception.upstream());
        InterceptedTunnel tunnel = new InterceptedTunnel(ex, runtime, clientAddress);
        TunnelSwitch.forBulk(client);
        TunnelSwitch.forBulk(upstream);

        ChannelPipeline cp = client.pipeline();
        cp.remove(ProxyServer.TIMEOUTS);
        cp.remove(ProxyResponseEncoder.NAME);
        // Removing the decoder hands any bytes it still holds to the exchange handler, which holds them.
        cp.remove(StrictRequestDecoder.class);
        client.writeAndFlush(Unpooled.wrappedBuffer(ESTABLISHED));
        List<ByteBuf> early = new ArrayList<>();
        Object o;
        while ((o = ex.held.poll()) != null) {
            early.add((ByteBuf) o);
        }
        ClientPipeline.uninstall(cp);

        long handshakeMillis = runtime.timeouts().header().toMillis();
        ProxyResponseEncoder encoder = new ProxyResponseEncoder();
        // Every ClientHello the client sends in the clear is judged as the first: the SNI handler reads only that one.
        TunnelSniCheck gate = new TunnelSniCheck(target, tunnel::refused, MAX_CLIENT_HELLO, 0, false);
        cp.addLast(TunnelSniCheck.NAME, gate)
                .addLast(ServerHelloWatch.NAME, new ServerHelloWatch(gate, true))
                .addLast(
                        TLS,
                        new SniHandler(sniMapping(target, interception, tunnel), MAX_CLIENT_HELLO, handshakeMillis))
                .addLast(InterceptedTunnel.NAME, tunnel)
                .addLast(
                        ProxyServer.DECODER,
                        new StrictRequestDecoder(runtime.config().limits()))
                .addLast(ProxyServer.TIMEOUTS, new ClientTimeouts(runtime.timeouts()))
                .addLast(ProxyResponseEncoder.NAME, encoder);
        ClientPipeline.install(
                cp,
                runtime,
                encoder,
                new TunnelRouter(runtime.config().network(), target),
                interception.upstream(),
                spare);
        // Bytes the client sent with its CONNECT (a ClientHello) go first, in order.
        for (ByteBuf b : early) {
            cp.fireChannelRead(b);
        }
        if (!early.isEmpty()) {
            cp.fireChannelReadComplete();
        }
        client.config().setAutoRead(true);
    }

    /**
     * Picks the certificate for the ClientHello: the CONNECT host's, whatever the client's SNI says, except
     * that an SNI naming another host fails the handshake (no domain fronting). No SNI: the CONNECT host.
     */
    private static AsyncMapping<String, SslContext> sniMapping(
            Target target, Interception interception, InterceptedTunnel tunnel) {
        return (sni, promise) -> {
            if (sni != null && !sameHost(sni, target)) {
                tunnel.sniMismatch(sni);
                return promise.setFailure(new SniMismatchException(sni, target));
            }
            return complete(promise, interception.server().contextFor(target.host()));
        };
    }

    private static Future<SslContext> complete(
            Promise<SslContext> promise, java.util.concurrent.CompletableFuture<SslContext> f) {
        f.whenComplete((context, error) -> {
            if (error != null) {
                promise.tryFailure(error);
            } else {
                promise.trySuccess(context);
            }
        });
        return promise;
    }

    private static boolean sameHost(String sni, Target target) {
        return dev.agentjail.proxy.tls.Hellos.names(sni, target);
    }

    /** The ClientHello named another server than the CONNECT. */
    static final class SniMismatchException extends Exception {
        SniMismatchException(String sni, Target target) {
            super("TLS server name does not match the CONNECT host " + target.host(), null, false, false);
        }
    }
}
