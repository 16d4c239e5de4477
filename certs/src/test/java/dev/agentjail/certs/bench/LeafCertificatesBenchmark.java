package dev.agentjail.certs.bench;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.certs.LeafCertificate;
import dev.agentjail.certs.LeafCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Comparator;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Leaf certificate cost: {@code mint} asks for a host never seen before (one signature and one
 * parse, waited for on the minting executor); {@code cached} asks for a host already in the cache.
 * Not run by the build; see docs/ca.md for the command.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LeafCertificatesBenchmark {
    private Path dir;
    private ExecutorService executor;
    private LeafCertificates leaves;
    private long next;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("agentjail-bench-ca");
        CertificateAuthority ca = CertificateAuthority.loadOrCreate(dir.resolve("ca"), Clock.systemUTC());
        executor = Executors.newSingleThreadExecutor();
        // Large enough that mint never finds its host already cached within a run.
        leaves = new LeafCertificates(ca, Clock.systemUTC(), executor, LeafCertificates.DEFAULT_VALIDITY, 1L << 22);
        leaves.forHost("cached.example.test").get();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        executor.shutdownNow();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Benchmark
    public LeafCertificate mint() throws Exception {
        return leaves.forHost("h" + (next++) + ".example.test").get();
    }

    @Benchmark
    public LeafCertificate cached() throws Exception {
        return leaves.forHost("cached.example.test").get();
    }
}
