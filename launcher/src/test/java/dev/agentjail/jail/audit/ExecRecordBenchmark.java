package dev.agentjail.jail.audit;

import dev.agentjail.proxy.audit.AuditChain;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.audit.FileAuditLog;
import dev.agentjail.proxy.redact.Redactor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 * The launcher's CPU per program started in the jail: one supervisor frame of a compiler's start (15 arguments, as
 * make's recipes give them) turned into its {@code exec} record and appended to a chained log, the work behind each
 * exec on a build (docs/benchmarks.md, issue 20). {@code distinct}: every command line new, so every frame is parsed,
 * redacted, serialised, chained and written; {@code repeat}: the same command line again within the window, counted on
 * its bytes. A window ends every 500 frames, so {@code distinct} stays within a window's 1,000 records.
 *
 * <p>Run: {@code bench/jmh.sh -m launcher ExecRecordBenchmark -jvmArgsAppend -XX:TieredStopAtLevel=1} for the JIT
 * {@code bin/agentjail} runs with; add {@code -Djava.io.tmpdir=/dev/shm} to take the disk out.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ExecRecordBenchmark {

    private static final int FRAMES = 4_096;
    private static final int WINDOW = 500;

    @Param({"distinct", "repeat"})
    public String shape;

    private Path dir;
    private FileAuditLog log;
    private JailActivity activity;
    private final List<ByteBuf> frames = new ArrayList<>();
    private int next;
    private long time = 1_764_842_400_000L;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("agentjail-exec-bench");
        log = FileAuditLog.open(
                dir.resolve("audit.jsonl"), FileAuditLog.Options.defaults().withSyncInterval(Duration.ofHours(1)));
        PathView view = new PathView(Path.of("/home/u/proj"), Path.of("/home/u"));
        activity = new JailActivity("a1b2c3d4e5f6", view, Redactor.builtIn(), record -> {
            try {
                log.append(record);
            } catch (AuditUnavailableException e) {
                throw new IllegalStateException(e);
            }
        });
        int count = shape.equals("distinct") ? FRAMES : 1;
        for (int i = 0; i < count; i++) {
            frames.add(frame(i));
        }
    }

    /** An exec frame as audit.c writes it, but for its time (set per call). */
    private static ByteBuf frame(int unit) {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(AuditFrame.EXEC);
        field(b, AuditFrame.TID, "4242");
        field(b, AuditFrame.SYSCALL, "execve");
        field(b, AuditFrame.PATH, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1");
        field(b, AuditFrame.CWD, "/home/u/proj");
        field(b, AuditFrame.PID, Integer.toString(1_000 + unit));
        field(b, AuditFrame.PPID, "57");
        field(b, AuditFrame.UID, "1000");
        for (String arg : List.of(
                "/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
                "-quiet",
                "-imultiarch",
                "x86_64-linux-gnu",
                "src/u" + unit + ".c",
                "-quiet",
                "-dumpdir",
                "out/",
                "-dumpbase",
                "u" + unit + ".c",
                "-dumpbase-ext",
                ".c",
                "-mtune=generic",
                "-march=x86-64",
                "-O1")) {
            field(b, AuditFrame.ARG, arg);
        }
        return b;
    }

    private static void field(ByteBuf b, int tag, String value) {
        byte[] v = value.getBytes(StandardCharsets.UTF_8);
        b.writeByte(tag);
        b.writeShortLE(v.length);
        b.writeBytes(v);
    }

    @Benchmark
    public void exec() {
        ByteBuf body = frames.get(next % frames.size()).retainedDuplicate();
        // The time goes last, as a field of its own: a frame's bytes but its time are its identity.
        ByteBuf timed = Unpooled.wrappedBuffer(body, timeField(time++));
        try {
            activity.frame(timed);
        } finally {
            timed.release();
        }
        if (++next % WINDOW == 0) {
            activity.tick();
        }
    }

    private static ByteBuf timeField(long ms) {
        ByteBuf b = Unpooled.buffer(16);
        field(b, AuditFrame.TIME, Long.toString(ms));
        return b;
    }

    /** Keeps the disk use bounded: what a long run rotated out is removed between iterations. */
    @TearDown(Level.Iteration)
    public void dropRotated() throws IOException {
        Path file = dir.resolve("audit.jsonl");
        for (Path rotated : AuditChain.rotationSet(file)) {
            if (!rotated.equals(file)) {
                Files.delete(rotated);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        for (ByteBuf b : frames) {
            b.release();
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
