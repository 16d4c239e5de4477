package dev.agentjail.proxy.audit.bench;

import dev.agentjail.proxy.audit.AuditChain;
import dev.agentjail.proxy.audit.AuditHmacKey;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.FileAuditLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one audit append: {@code unchained} is what the log did before the hash chain (serialise, one
 * {@code write(2)} under a lock), {@code chain} adds seq, prev_hash, the SHA-256 and the cross-process lock and stat,
 * {@code chain-hmac} adds the HMAC too. Group commit is off in all three, so the numbers are the append path itself; put
 * the files on tmpfs ({@code -jvmArgsAppend -Djava.io.tmpdir=/dev/shm}) to take the disk out as well. Run with
 * {@code -t 4} for contention between threads.
 *
 * <p>Run: {@code bench/jmh.sh AuditAppendBenchmark}; results are in docs/audit-log.md ("Tamper evidence").
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class AuditAppendBenchmark {

    @Param({"unchained", "chain", "chain-hmac"})
    public String mode;

    private Path dir;
    private Path file;
    private FileAuditLog log;
    private FileChannel raw;
    private final ReentrantLock rawLock = new ReentrantLock();
    private AuditRecord record;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("agentjail-audit-bench");
        file = dir.resolve("audit.jsonl");
        record = AuditRecord.builder()
                .ts(Instant.parse("2026-11-30T09:44:07.123Z"))
                .session("a1b2c3d4e5f6")
                .decision(AuditRecord.ALLOW)
                .reason("allowed")
                .rule("api.anthropic.com:443")
                .method("POST")
                .scheme(AuditRecord.SCHEME_HTTPS)
                .host("api.anthropic.com")
                .port(443)
                .path("/v1/messages")
                .status(200)
                .bytesOut(18_234)
                .bytesIn(92_113)
                .durationMs(1_834)
                .tls(AuditRecord.TLS_INTERCEPT)
                .client("127.0.0.1:51234")
                .resolvedIp("160.79.104.10")
                .build();
        // No group commit during the measurement: the baseline has none either, and fsync times are the disk's.
        FileAuditLog.Options options = FileAuditLog.Options.defaults().withSyncInterval(Duration.ofHours(1));
        switch (mode) {
            case "unchained" ->
                raw = FileChannel.open(
                        file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            case "chain" -> log = FileAuditLog.open(file, options);
            case "chain-hmac" -> {
                byte[] key = "benchmark key, not a secret, 32+ bytes".getBytes(StandardCharsets.US_ASCII);
                Path keyFile = Files.write(dir.resolve("key"), key);
                Files.setPosixFilePermissions(
                        keyFile, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
                log = FileAuditLog.open(file, options.withHmacKey(AuditHmacKey.load(keyFile)));
            }
            default -> throw new IllegalArgumentException(mode);
        }
    }

    /** Keeps the disk use bounded: what a long run rotated out is removed between iterations. */
    @TearDown(Level.Iteration)
    public void dropRotated() throws IOException {
        for (Path rotated : AuditChain.rotationSet(file)) {
            if (!rotated.equals(file)) {
                Files.delete(rotated);
            }
        }
        if (raw != null) {
            raw.truncate(0);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        if (log != null) {
            log.close();
        }
        if (raw != null) {
            raw.close();
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Benchmark
    public void append() throws Exception {
        if (log != null) {
            log.append(record);
            return;
        }
        ByteBuffer line = ByteBuffer.wrap(AuditJson.toLine(record).getBytes(StandardCharsets.UTF_8));
        rawLock.lock();
        try {
            while (line.hasRemaining()) {
                raw.write(line);
            }
        } finally {
            rawLock.unlock();
        }
    }
}
