package dev.agentjail.proxy.tls.bench;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.certs.LeafCertificates;
import dev.agentjail.proxy.testing.TestTls;
import dev.agentjail.proxy.tls.ServerContexts;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLParameters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of the proxy's side of an intercepted TLS handshake once the host's certificate is cached:
 * {@code cachedLookupAndHandshake} fetches the host's server context from {@link ServerContexts} and
 * runs a full TLS 1.3 handshake in memory against a JDK client that verifies the host name;
 * {@code handshakeOnly} runs the same handshake with the context already in hand. Their difference is
 * the lookup's overhead; the handshake itself is what every new intercepted connection pays.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HandshakeBenchmark {
    private static final String HOST = "api.bench.test";

    private ExecutorService minting;
    private ServerContexts contexts;
    private SslContext server;
    private SSLContext client;
    private Path dir;

    @Setup
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("handshake-bench");
        Clock clock = Clock.systemUTC();
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(dir.resolve("ca"), clock);
        minting = Executors.newSingleThreadExecutor();
        contexts =
                new ServerContexts(new LeafCertificates(ca, clock, minting, Duration.ofHours(24), 1000), minting, 1000);
        server = contexts.contextFor(HOST).get();
        client = TestTls.clientTrusting(ca.certificate());
    }

    @TearDown
    public void tearDown() {
        minting.shutdownNow();
    }

    @Benchmark
    public boolean cachedLookupAndHandshake() throws Exception {
        return handshake(contexts.contextFor(HOST).join());
    }

    @Benchmark
    public boolean handshakeOnly() throws Exception {
        return handshake(server);
    }

    private boolean handshake(SslContext serverContext) throws Exception {
        SSLEngine s = serverContext.newEngine(ByteBufAllocator.DEFAULT);
        SSLEngine c = client.createSSLEngine(HOST, 443);
        c.setUseClientMode(true);
        SSLParameters p = c.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        c.setSSLParameters(p);
        ByteBuffer toServer = ByteBuffer.allocate(64 * 1024);
        ByteBuffer toClient = ByteBuffer.allocate(64 * 1024);
        ByteBuffer app = ByteBuffer.allocate(64 * 1024);
        ByteBuffer empty = ByteBuffer.allocate(0);
        c.beginHandshake();
        s.beginHandshake();
        for (int round = 0; round < 50; round++) {
            step(c, empty, toServer, toClient, app);
            step(s, empty, toClient, toServer, app);
            if (done(c) && done(s)) {
                return true;
            }
        }
        throw new IllegalStateException(
                "handshake did not finish: client " + c.getHandshakeStatus() + ", server " + s.getHandshakeStatus());
    }

    /** Lets one engine read what its peer sent and write what it has to send. */
    private static void step(SSLEngine e, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer app)
            throws Exception {
        in.flip();
        while (in.hasRemaining()) {
            app.clear();
            SSLEngineResult r = e.unwrap(in, app);
            runTasks(e);
            if (r.getStatus() != SSLEngineResult.Status.OK || (r.bytesConsumed() == 0 && r.bytesProduced() == 0)) {
                break;
            }
        }
        in.compact();
        // Some engines finish a flight only when asked to read again with nothing new to read.
        if (e.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_UNWRAP && in.position() == 0) {
            app.clear();
            in.flip();
            e.unwrap(in, app);
            runTasks(e);
            in.compact();
        }
        while (e.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
            e.wrap(empty, out);
            runTasks(e);
        }
    }

    private static void runTasks(SSLEngine e) {
        Runnable task;
        while ((task = e.getDelegatedTask()) != null) {
            task.run();
        }
    }

    private static boolean done(SSLEngine e) {
        SSLEngineResult.HandshakeStatus h = e.getHandshakeStatus();
        return h == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING || h == SSLEngineResult.HandshakeStatus.FINISHED;
    }
}
