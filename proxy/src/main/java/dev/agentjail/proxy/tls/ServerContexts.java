package dev.agentjail.proxy.tls;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.agentjail.certs.LeafCertificate;
import dev.agentjail.certs.LeafCertificates;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLException;

/**
 * The TLS server side of interception: one {@link SslContext} per intercepted host, built from the
 * leaf certificate our CA mints for it, off the event loop and once per host however many
 * connections ask at the same time.
 *
 * <p>Only {@code http/1.1} is offered in ALPN; a client that insists on {@code h2} gets no protocol
 * and fails its handshake (docs/https-inspection.md says what to do about it).
 */
public final class ServerContexts {
    /** Far shorter than any leaf's remaining validity when it leaves the leaf cache (half its life). */
    private static final Duration CONTEXT_LIFETIME = Duration.ofHours(1);

    private final AsyncLoadingCache<String, SslContext> contexts;
    private final LeafCertificates leaves;

    public ServerContexts(LeafCertificates leaves, Executor executor, long maxEntries) {
        this.leaves = leaves;
        this.contexts = Caffeine.newBuilder()
                .maximumSize(maxEntries)
                .expireAfterWrite(CONTEXT_LIFETIME)
                .executor(executor)
                .buildAsync((host, ex) -> leaves.forHost(host).thenApply(ServerContexts::serverContext));
    }

    /** The server context for {@code host} (canonical), completing off the caller's thread when not cached. */
    public CompletableFuture<SslContext> contextFor(String host) {
        return contexts.get(host);
    }

    /**
     * Mints a throwaway certificate and builds a server context from it, in the background and outside the cache: the
     * first intercepted connection of a fresh process then finds the signing code, the leaf key and the TLS library
     * ready instead of waiting seconds for them. Completes when done; a failure here is reported by the first real
     * host again.
     */
    public CompletableFuture<SslContext> warmUp() {
        return leaves.warmUp().thenApply(ServerContexts::serverContext);
    }

    private static SslContext serverContext(LeafCertificate leaf) {
        try {
            return SslContextBuilder.forServer(leaf.key(), leaf.chain())
                    .sslProvider(TlsProviders.preferred())
                    .protocols("TLSv1.3", "TLSv1.2")
                    .applicationProtocolConfig(new ApplicationProtocolConfig(
                            ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            ApplicationProtocolNames.HTTP_1_1))
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build a TLS server context from the minted certificate", e);
        }
    }
}
