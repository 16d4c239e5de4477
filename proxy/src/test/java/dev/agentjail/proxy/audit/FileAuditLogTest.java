package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileAuditLogTest {

    /** Long enough that a line spans several pages of a pipe or buffer, so interleaving would show. */
    private static final String LONG_PATH = "/" + "p".repeat(1500);

    /** How every line starts; the chain fields follow it. */
    private static final String V = "{\"v\":" + AuditRecord.SCHEMA_VERSION + ",";

    @TempDir
    Path dir;

    /** Failure switches shared by every storage the log opens, including the ones it reopens after a failure. */
    static final class Controls {
        volatile boolean failWrites;
        volatile boolean tearWrites;
        volatile boolean failForce;
        final AtomicInteger forces = new AtomicInteger();
        final AtomicInteger opens = new AtomicInteger();
        volatile String forceThread;
        /** When set, every force waits for it (a slow disk). */
        volatile CountDownLatch holdForce;
    }

    /** A real file channel behind switches that make write or force fail the way a full or broken disk does. */
    record SwitchedStorage(FileChannel channel, Controls controls) implements FileAuditLog.Storage {
        @Override
        public int write(ByteBuffer source) throws IOException {
            if (controls.failWrites) {
                throw new IOException("No space left on device");
            }
            if (controls.tearWrites) {
                ByteBuffer half = source.slice(source.position(), source.remaining() / 2);
                int written = channel.write(half);
                source.position(source.position() + written);
                throw new IOException("No space left on device");
            }
            return channel.write(source);
        }

        @Override
        public void force() throws IOException {
            controls.forceThread = Thread.currentThread().getName();
            CountDownLatch hold = controls.holdForce;
            if (hold != null) {
                try {
                    hold.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
            if (controls.failForce) {
                throw new IOException("Input/output error");
            }
            controls.forces.incrementAndGet();
            channel.force(false);
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    private static AuditRecord record(String session, String path) {
        return AuditRecord.builder()
                .ts(Instant.parse("2026-11-30T09:44:07.123Z"))
                .session(session)
                .decision("allow")
                .reason("allowlisted")
                .host("api.allowed.test")
                .port(443)
                .path(path)
                .build();
    }

    private FileAuditLog switched(Path file, Controls controls, Duration syncInterval) throws IOException {
        return new FileAuditLog(
                file,
                path -> {
                    controls.opens.incrementAndGet();
                    return new SwitchedStorage(
                            FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.APPEND), controls);
                },
                FileAuditLog.Options.defaults().withSyncInterval(syncInterval));
    }

    private static List<String> lines(Path file) throws IOException {
        return Files.readAllLines(file, StandardCharsets.UTF_8);
    }

    @Test
    void createsFile0600InDirectories0700() throws Exception {
        Path file = dir.resolve("a/b/audit.jsonl");

        try (FileAuditLog log = FileAuditLog.open(file, Duration.ofSeconds(1))) {
            log.append(record("s", "/"));
        }

        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("a"))));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("a/b"))));
    }

    @Test
    void aRotationLeavesTheFsyncOfTheFullFileToTheSyncerThread() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Controls controls = new Controls();
        CountDownLatch disk = new CountDownLatch(1);
        ExecutorService appender = Executors.newSingleThreadExecutor();
        try (FileAuditLog log = new FileAuditLog(
                file,
                path -> new SwitchedStorage(
                        FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.APPEND), controls),
                FileAuditLog.Options.defaults()
                        .withSyncInterval(Duration.ofHours(1))
                        .withMaxFileBytes(2048))) {
            controls.holdForce = disk;
            try {
                // With a disk that never finishes an fsync, appends across several rotations still return.
                Future<?> appends = appender.submit(() -> {
                    for (int i = 0; i < 40; i++) {
                        log.append(record("s", "/" + i));
                    }
                    return null;
                });
                appends.get(20, TimeUnit.SECONDS);
                assertTrue(Files.exists(file.resolveSibling("audit.jsonl.2")), "rotated more than once");
                // The syncer may not have reached the rotated file's force yet on a busy machine (bounded wait).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (controls.forceThread == null && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                String forcedOn = controls.forceThread;
                assertTrue(
                        forcedOn != null && forcedOn.startsWith("agentjail-audit"),
                        () -> "the rotated file is forced on " + forcedOn);
            } finally {
                // Before close, which forces too: a failed assertion must not leave close waiting on the disk.
                disk.countDown();
            }
        } finally {
            disk.countDown();
            appender.shutdownNow();
        }
        // Forced (on the syncer) before close returned, and still one chain across the files.
        assertTrue(controls.forces.get() >= 2, () -> "forces: " + controls.forces.get());
        List<Path> set = AuditChain.rotationSet(file);
        assertTrue(set.size() >= 3, set::toString);
        assertEquals(40, set.stream().mapToInt(f -> uncheckedLines(f).size()).sum());
    }

    private static List<String> uncheckedLines(Path file) {
        try {
            return lines(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void recordIsInTheFileWhenAppendReturnsWithoutCloseOrSync() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        // An hour-long sync interval and no close: only the write(2) in append can have put the line there.
        try (FileAuditLog log = FileAuditLog.open(file, Duration.ofHours(1))) {
            log.append(record("s", "/first"));

            String chained = AuditJson.toLine(record("s", "/first"))
                    .stripTrailing()
                    .replace(V, V + "\"seq\":1,\"prev_hash\":\"" + AuditChain.GENESIS + "\",");
            assertEquals(List.of(chained), lines(file));
        }
    }

    /** Runs in a child JVM: appends, announces it, then waits to be killed with SIGKILL. */
    static final class AppendThenHang {
        public static void main(String[] args) throws Exception {
            FileAuditLog log = FileAuditLog.open(Path.of(args[0]), Duration.ofHours(1));
            int count = Integer.parseInt(args[1]);
            for (int i = 0; i < count; i++) {
                log.append(record("child", "/" + i));
            }
            System.out.println("appended");
            System.out.flush();
            Thread.sleep(Duration.ofMinutes(5));
        }
    }

    @Test
    void acknowledgedRecordsSurviveKillMinusNine() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(
                        java,
                        "-cp",
                        System.getProperty("java.class.path"),
                        AppendThenHang.class.getName(),
                        file.toString(),
                        "50")
                .redirectError(dir.resolve("child.err").toFile())
                .start();
        try (BufferedReader out = child.inputReader(StandardCharsets.UTF_8)) {
            assertEquals("appended", out.readLine(), () -> readQuietly(dir.resolve("child.err")));
        } finally {
            child.destroyForcibly(); // SIGKILL on Linux: no shutdown hook, no close, no final fsync
            child.waitFor();
        }

        List<String> lines = lines(file);
        assertEquals(50, lines.size());
        assertEquals("/49", MiniJson.parseObject(lines.get(49)).get("path"));
        assertIntact(file, 50);
    }

    @Test
    void appendsToAnExistingFileWithoutTruncatingIt() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Files.writeString(file, "{\"earlier\":true}\n");

        try (FileAuditLog log = FileAuditLog.open(file)) {
            log.append(record("s", "/"));
        }

        List<String> lines = lines(file);
        assertEquals(2, lines.size());
        assertEquals("{\"earlier\":true}", lines.get(0));
    }

    @Test
    void refusesToFollowASymlink() throws Exception {
        Path target = dir.resolve("elsewhere.jsonl");
        Path link = Files.createSymbolicLink(dir.resolve("audit.jsonl"), target);

        assertThrows(IOException.class, () -> FileAuditLog.open(link));
        assertFalse(Files.exists(target));
    }

    @Test
    void concurrentAppendsProduceWholeLinesOnly() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        int threads = 64;
        int perThread = 100;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try (FileAuditLog log = FileAuditLog.open(file, Duration.ofMillis(5))) {
            List<Future<?>> futures = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String session = "t" + t;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        log.append(record(session, LONG_PATH + "/" + i));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }

        List<String> lines = lines(file);
        assertEquals(threads * perThread, lines.size());
        Set<String> seen = new HashSet<>();
        for (String line : lines) {
            Map<String, Object> parsed = MiniJson.parseObject(line);
            assertTrue(seen.add(parsed.get("session") + " " + parsed.get("path")), "duplicate " + line);
        }
        assertIntact(file, threads * perThread);
    }

    @Test
    void failedWriteRefusesAndTheNextAppendRecovers() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Controls controls = new Controls();
        try (FileAuditLog log = switched(file, controls, Duration.ofHours(1))) {
            log.append(record("s", "/before"));
            assertTrue(log.healthy());

            controls.failWrites = true;
            AuditUnavailableException e =
                    assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/lost")));
            assertTrue(e.getMessage().contains("No space left on device"), e.getMessage());
            assertFalse(log.healthy());
            assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/lost-again")));

            controls.failWrites = false;
            log.append(record("s", "/after"));
            assertTrue(log.healthy());
        }

        List<String> paths = lines(file).stream()
                .map(l -> MiniJson.parseObject(l).get("path"))
                .map(String::valueOf)
                .toList();
        assertEquals(List.of("/before", "/after"), paths);
    }

    @Test
    void tornWriteIsTerminatedSoTheRetriedRecordIsItsOwnLine() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Controls controls = new Controls();
        try (FileAuditLog log = switched(file, controls, Duration.ofHours(1))) {
            log.append(record("s", "/before"));
            controls.tearWrites = true;
            assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/torn")));
            assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/torn-again")));
            controls.tearWrites = false;
            log.append(record("s", "/whole"));
        }

        List<String> lines = lines(file);
        assertEquals(4, lines.size(), lines::toString);
        assertEquals("/before", MiniJson.parseObject(lines.get(0)).get("path"));
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject(lines.get(1)));
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject(lines.get(2)));
        Map<String, Object> whole = MiniJson.parseObject(lines.get(3));
        assertEquals("/whole", whole.get("path"));
        // The failed records were never acknowledged, so the seq carries on from the last one that was.
        assertEquals(new BigDecimal(2), whole.get("seq"));
        assertEquals(Sha256.hex(lines.get(2)), whole.get("prev_hash"), "the record links to the fragment before it");
        ChainVerifier.Report report = assertIntact(file, 2);
        assertEquals(
                List.of(ChainVerifier.Kind.TORN_LINE),
                report.notes().stream().map(ChainVerifier.Finding::kind).toList());
        assertEquals(2, report.notes().get(0).line());
    }

    @Test
    void aBatchIsChainedAsSingleAppendsAndATornOneIsTerminatedBeforeTheNext() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Controls controls = new Controls();
        try (FileAuditLog log = switched(file, controls, Duration.ofHours(1))) {
            log.append(record("s", "/one"));
            log.appendAll(List.of(record("s", "/two"), record("s", "/three"), record("s", "/four")));
            log.appendAll(List.of());
            log.append(record("s", "/five"));
            controls.tearWrites = true;
            // Half of three lines reach the file: the first whole, the second in part.
            assertThrows(
                    AuditUnavailableException.class,
                    () -> log.appendAll(List.of(record("s", "/torn-a"), record("s", "/torn-b"), record("s", "/c"))));
            controls.tearWrites = false;
            log.appendAll(List.of(record("s", "/six"), record("s", "/seven")));
        }

        List<String> lines = lines(file);
        List<Object> paths = lines.stream()
                .map(l -> {
                    try {
                        return MiniJson.parseObject(l).get("path");
                    } catch (IllegalArgumentException torn) {
                        return "torn";
                    }
                })
                .toList();
        assertEquals(List.of("/one", "/two", "/three", "/four", "/five", "/torn-a", "torn", "/six", "/seven"), paths);
        long seq = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (paths.get(i).equals("torn")) {
                continue;
            }
            Map<String, Object> line = MiniJson.parseObject(lines.get(i));
            assertEquals(new BigDecimal(++seq), line.get("seq"), lines.get(i));
            if (i > 0) {
                assertEquals(Sha256.hex(lines.get(i - 1)), line.get("prev_hash"), "each line links to the one before");
            }
        }
        assertIntact(file, 8);
    }

    @Test
    void interruptedWriterDoesNotBreakTheLogForEveryoneElse() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = FileAuditLog.open(file, Duration.ofHours(1))) {
            // An interrupt during FileChannel.write closes the channel; the log must reopen it, not stay dead.
            Thread.currentThread().interrupt();
            AuditUnavailableException e =
                    assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/interrupted")));
            assertInstanceOf(ClosedByInterruptException.class, e.getCause());
            assertTrue(Thread.interrupted(), "the interrupt stays visible to its owner");

            log.append(record("s", "/next"));
            assertTrue(log.healthy());
        }

        assertEquals(
                "/next",
                MiniJson.parseObject(lines(file).get(lines(file).size() - 1)).get("path"));
    }

    @Test
    void groupCommitForcesOnTheSyncThreadOnlyWhenSomethingWasWritten() throws Exception {
        Controls controls = new Controls();
        try (FileAuditLog log = switched(dir.resolve("audit.jsonl"), controls, Duration.ofMillis(10))) {
            Thread.sleep(100);
            assertEquals(0, controls.forces.get(), "nothing written, nothing to sync");

            log.append(record("s", "/"));
            await(() -> controls.forces.get() >= 1);

            assertEquals("agentjail-audit-sync", controls.forceThread);
            int afterFirst = controls.forces.get();
            Thread.sleep(100);
            assertEquals(afterFirst, controls.forces.get(), "idle log is not synced again");
        }
    }

    @Test
    void failedSyncRefusesAppendsUntilASyncSucceeds() throws Exception {
        Controls controls = new Controls();
        try (FileAuditLog log = switched(dir.resolve("audit.jsonl"), controls, Duration.ofMillis(10))) {
            controls.failForce = true;
            log.append(record("s", "/written"));
            await(() -> !log.healthy());

            assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/refused")));

            controls.failForce = false;
            log.append(record("s", "/accepted"));
            assertTrue(log.healthy());
        }
    }

    @Test
    void closeForcesAndLaterAppendsFail() throws Exception {
        Controls controls = new Controls();
        FileAuditLog log = switched(dir.resolve("audit.jsonl"), controls, Duration.ofHours(1));
        log.append(record("s", "/"));

        log.close();

        assertEquals(1, controls.forces.get());
        assertFalse(log.healthy());
        assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/late")));
        assertDoesNotThrow(log::close);
        assertEquals(1, controls.forces.get(), "a second close does nothing");
    }

    @Test
    void rejectsANonPositiveSyncInterval() {
        assertThrows(IllegalArgumentException.class, () -> FileAuditLog.open(dir.resolve("a"), Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> FileAuditLog.open(dir.resolve("b"), Duration.ofMillis(-1)));
    }

    private static ChainVerifier.Report assertIntact(Path file, long records) throws IOException {
        ChainVerifier.Report report = new ChainVerifier(null, false).verify(List.of(file));
        assertTrue(report.intact(), report::toString);
        assertEquals(records, report.records(), report::toString);
        return report;
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 10 s");
            }
            Thread.sleep(5);
        }
    }
}
