package dev.agentjail.proxy.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.certs.LeafCertificates;
import io.netty.handler.ssl.SslContext;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The per-host server contexts of interception, and the warm-up that readies them in a fresh process. */
class ServerContextsTest {
    @TempDir
    Path dir;

    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    @Test
    void theWarmUpBuildsAServerContextThatNoHostGets() throws Exception {
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(dir.resolve("ca"), Clock.systemUTC());
        LeafCertificates leaves = new LeafCertificates(ca, Clock.systemUTC(), executor, Duration.ofHours(24), 10);
        ServerContexts contexts = new ServerContexts(leaves, executor, 10);

        SslContext warm = contexts.warmUp().get(30, TimeUnit.SECONDS);

        assertTrue(warm.isServer());
        SslContext real = contexts.contextFor(LeafCertificates.WARM_UP_HOST).get(30, TimeUnit.SECONDS);
        assertNotSame(warm, real, "the warm-up's context is not cached for any host");
        assertSame(real, contexts.contextFor(LeafCertificates.WARM_UP_HOST).get(30, TimeUnit.SECONDS));
        assertEquals(
                "CN=" + LeafCertificates.WARM_UP_HOST,
                leaves.forHost(LeafCertificates.WARM_UP_HOST)
                        .get(30, TimeUnit.SECONDS)
                        .certificate()
                        .getSubjectX500Principal()
                        .getName());
    }
}
