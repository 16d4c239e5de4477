package dev.agentjail.proxy.tls;

import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * The proxy's TLS client towards upstreams of intercepted tunnels: trusts the system roots plus the
 * CAs the policy adds ({@code tls.upstream_ca}), always verifies the host name, always sends SNI.
 * There is no way to turn verification off.
 */
public final class UpstreamTls {
    private final CompletableFuture<SslContext> context;

    private UpstreamTls(CompletableFuture<SslContext> context) {
        this.context = context;
    }

    /** A client that trusts exactly {@code roots} (the system's roots and the policy's extra CAs). */
    public static UpstreamTls trusting(List<X509Certificate> roots) throws Exception {
        return new UpstreamTls(CompletableFuture.completedFuture(build(trustManagers(roots))));
    }

    /**
     * The same, with the TLS context built on {@code executor}: loading the native TLS library takes a
     * good part of a second, which a session's start-up should not wait for. The first upstream
     * connection waits for it if it is not ready yet.
     */
    public static UpstreamTls trustingInBackground(Supplier<List<X509Certificate>> roots, Executor executor) {
        return new UpstreamTls(CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return build(trustManagers(roots.get()));
                    } catch (Exception e) {
                        throw new CompletionException(e);
                    }
                },
                executor));
    }

    private static TrustManagerFactory trustManagers(List<X509Certificate> roots) throws Exception {
        if (roots.isEmpty()) {
            throw new IllegalArgumentException("no trusted root certificates: upstream TLS could verify nothing");
        }
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        int i = 0;
        for (X509Certificate root : roots) {
            store.setCertificateEntry("root-" + i++, root);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        return tmf;
    }

    private static SslContext build(TrustManagerFactory tmf) throws SSLException {
        return SslContextBuilder.forClient()
                .sslProvider(TlsProviders.preferred())
                .trustManager(tmf)
                .protocols("TLSv1.3", "TLSv1.2")
                .endpointIdentificationAlgorithm("HTTPS")
                .applicationProtocolConfig(new ApplicationProtocolConfig(
                        ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_1_1))
                .build();
    }

    /** A handler for one connection to {@code target}: SNI set (for names), the host name verified. */
    public SslHandler newHandler(ByteBufAllocator alloc, Target target) {
        SslHandler handler = context.join().newHandler(alloc, target.host(), target.port());
        SSLEngine engine = handler.engine();
        SSLParameters params = engine.getSSLParameters();
        // Belt and braces: the builder sets it, and a missing check would deliver requests to impostors.
        params.setEndpointIdentificationAlgorithm("HTTPS");
        if (target.kind() != HostKind.DNS) {
            params.setServerNames(List.of());
        }
        engine.setSSLParameters(params);
        return handler;
    }
}
