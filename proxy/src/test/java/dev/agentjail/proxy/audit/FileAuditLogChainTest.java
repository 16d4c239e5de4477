package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The writer's side of tamper evidence: seq and prev_hash on every line, across reopening, rotation and writers. */
class FileAuditLogChainTest {

    @TempDir
    Path dir;

    static AuditRecord record(String session, String path) {
        return AuditRecord.builder()
                .ts(Instant.parse("2026-11-30T09:44:07.123Z"))
                .session(session)
                .decision("allow")
                .reason("allowed")
                .host("api.allowed.test")
                .port(443)
                .path(path)
                .build();
    }

    private static FileAuditLog open(Path file) throws IOException {
        return FileAuditLog.open(file, FileAuditLog.Options.defaults().withSyncInterval(Duration.ofHours(1)));
    }

    private static List<String> lines(Path file) throws IOException {
        return Files.readAllLines(file, StandardCharsets.UTF_8);
    }

    private static ChainVerifier.Report verify(AuditHmacKey key, Path... files) throws IOException {
        return new ChainVerifier(key, false).verify(List.of(files));
    }

    private static ChainVerifier.Report assertIntact(long records, Path... files) throws IOException {
        ChainVerifier.Report report = verify(null, files);
        assertTrue(report.intact(), report::toString);
        assertEquals(records, report.records(), report::toString);
        return report;
    }

    private static long seq(String line) {
        return ((BigDecimal) MiniJson.parseObject(line).get("seq")).longValueExact();
    }

    @Test
    void everyLineStartsWithVersionSeqAndTheHashOfTheLineBefore() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = open(file)) {
            for (int i = 0; i < 3; i++) {
                log.append(record("s", "/" + i));
            }
        }

        List<String> lines = lines(file);
        assertEquals(3, lines.size());
        String previous = null;
        for (int i = 0; i < lines.size(); i++) {
            Map<String, Object> parsed = MiniJson.parseObject(lines.get(i));
            assertEquals(
                    List.of("v", "seq", "prev_hash", "kind"),
                    new ArrayList<>(parsed.keySet()).subList(0, 4),
                    "the chain fields come first, after v");
            assertEquals(new BigDecimal(i + 1), parsed.get("seq"));
            assertEquals(previous == null ? AuditChain.GENESIS : Sha256.hex(previous), parsed.get("prev_hash"));
            assertEquals("/" + i, parsed.get("path"));
            assertFalse(parsed.containsKey("hmac"), "no key, no hmac");
            previous = lines.get(i);
        }
        assertIntact(3, file);
    }

    @Test
    void reopeningTheFileContinuesTheChain() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        for (int session = 0; session < 3; session++) {
            try (FileAuditLog log = open(file)) {
                log.append(record("s" + session, "/a"));
                log.append(record("s" + session, "/b"));
            }
        }

        List<String> lines = lines(file);
        assertEquals(
                List.of(1L, 2L, 3L, 4L, 5L, 6L),
                lines.stream().map(FileAuditLogChainTest::seq).toList());
        assertEquals(
                Sha256.hex(lines.get(1)), MiniJson.parseObject(lines.get(2)).get("prev_hash"));
        assertIntact(6, file);
    }

    @Test
    void aLastLineCutShortByACrashIsTerminatedAndLinkedTo() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = open(file)) {
            log.append(record("s", "/1"));
            log.append(record("s", "/2"));
        }
        String fragment = "{\"v\":1,\"seq\":3,\"prev_hash\":\"" + "ab".repeat(16);
        Files.writeString(file, fragment, StandardOpenOption.APPEND); // the process died mid-write(2)
        assertEquals(
                ChainVerifier.Kind.TRUNCATED,
                verify(null, file).broken().orElseThrow().kind(),
                "before the next writer comes, the file is truncated");

        try (FileAuditLog log = open(file)) {
            log.append(record("s", "/3"));
        }

        List<String> lines = lines(file);
        assertEquals(4, lines.size());
        assertEquals(fragment, lines.get(2), "the fragment stays a line of its own, not merged with the next record");
        Map<String, Object> next = MiniJson.parseObject(lines.get(3));
        assertEquals(new BigDecimal(3), next.get("seq"), "the unacknowledged record took no seq");
        assertEquals(Sha256.hex(fragment), next.get("prev_hash"));
        ChainVerifier.Report report = assertIntact(3, file);
        assertEquals(ChainVerifier.Kind.TORN_LINE, report.notes().get(0).kind());
    }

    @Test
    void aWholeRecordThatOnlyLacksItsNewlineCountsAsARecord() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = open(file)) {
            log.append(record("s", "/1"));
            log.append(record("s", "/2"));
        }
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 1)); // died just before the newline

        try (FileAuditLog log = open(file)) {
            log.append(record("s", "/3"));
        }

        assertEquals(
                List.of(1L, 2L, 3L),
                lines(file).stream().map(FileAuditLogChainTest::seq).toList());
        assertIntact(3, file);
    }

    @Test
    void aFileWrittenBeforeTheChainIsFollowedByAChainLinkedToItsLastLine() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Files.writeString(file, "{\"v\":1,\"kind\":\"request\"}\n{\"v\":1,\"kind\":\"old\"}\n");

        try (FileAuditLog log = open(file)) {
            log.append(record("s", "/"));
        }

        Map<String, Object> first = MiniJson.parseObject(lines(file).get(2));
        assertEquals(new BigDecimal(1), first.get("seq"));
        assertEquals(Sha256.hex("{\"v\":1,\"kind\":\"old\"}"), first.get("prev_hash"));
        ChainVerifier.Report report = assertIntact(1, file);
        assertEquals(ChainVerifier.Kind.UNCHAINED, report.notes().get(0).kind());
        assertEquals(1, report.notes().get(0).line());
    }

    @Test
    void theEndOfAFileIsFoundBehindALastLineLongerThanTheFirstRead() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = open(file)) {
            log.append(record("s", "/1"));
        }
        String junk = "x".repeat(100_000); // far beyond the 8 KiB the tail reader starts with
        Files.writeString(file, junk + "\n", StandardOpenOption.APPEND);

        try (FileAuditLog log = open(file)) {
            log.append(record("s", "/2"));
        }

        Map<String, Object> second = MiniJson.parseObject(lines(file).get(2));
        assertEquals(new BigDecimal(2), second.get("seq"), "found record 1 behind the long line");
        assertEquals(Sha256.hex(junk), second.get("prev_hash"));
    }

    @Test
    void tailScanAsksForMoreWhenTheBufferStartsMidLine() {
        byte[] record = chainedLine(7, AuditChain.GENESIS);
        byte[] end = new byte[record.length - 10 + 1];
        System.arraycopy(record, 10, end, 0, record.length - 10);
        end[end.length - 1] = '\n';

        assertNull(ChainTail.scan(end, false, false, true), "the only line may start before the buffer");
        ChainTail whole = ChainTail.scan(withNewline(record), true, false, true);
        assertEquals(8, whole.nextSeq());
        assertArrayEquals(ChainEncoder.sha256().digest(record), whole.prevHash());
        assertFalse(whole.torn());
    }

    @Test
    void concurrentAppendsFromManyThreadsFormOneChain() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        int threads = 32;
        int perThread = 200;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try (FileAuditLog log = open(file)) {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String session = "t" + t;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        log.append(record(session, "/" + i));
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

        assertIntact(threads * perThread, file);
    }

    @Test
    void twoLogsOnTheSameFileInOneJvmInterleaveWithoutBreakingTheChain() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (FileAuditLog a = open(file);
                FileAuditLog b = open(file)) {
            List<Future<?>> futures = new ArrayList<>();
            for (FileAuditLog log : List.of(a, b, a, b)) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        log.append(record("s", "/" + i));
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }

        assertIntact(1200, file);
    }

    @Test
    void aLockFileRemovedUnderALeaseholderDoesNotLetTwoWritersAppendAtOnce() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Path lockFile = dir.resolve(".audit.jsonl.lock");
        try (FileAuditLog first = FileAuditLog.openWithoutIdleRelease(
                file, FileAuditLog.Options.defaults().withSyncInterval(Duration.ofHours(1)))) {
            first.append(record("first", "/0"));
            first.append(record("first", "/1"));
            // Someone removes the lock file; a writer that opens the log now makes and locks a new one.
            Files.delete(lockFile);
            try (FileAuditLog second = open(file)) {
                second.append(record("second", "/0"));
                Thread.sleep(5); // past the leaseholder's next look (every millisecond)
                first.append(record("first", "/2"));
                second.append(record("second", "/1"));
                first.append(record("first", "/3"));
            }
        }
        assertIntact(6, file);
        List<Long> seqs = lines(file).stream().map(FileAuditLogChainTest::seq).toList();
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), seqs);
    }

    @Test
    void aLockFileReplacedByALinkOrADirectoryIsNamedInTheRefusal() throws Exception {
        for (String kind : List.of("link", "directory")) {
            Path file = dir.resolve(kind + ".jsonl");
            Path lockFile = dir.resolve("." + kind + ".jsonl.lock");
            try (FileAuditLog log = open(file)) {
                log.append(record("a", "/0"));
                Files.delete(lockFile);
                if (kind.equals("link")) {
                    Files.createSymbolicLink(lockFile, dir.resolve("elsewhere"));
                } else {
                    Files.createDirectory(lockFile);
                }
                AuditUnavailableException e =
                        assertThrows(AuditUnavailableException.class, () -> log.append(record("a", "/1")));
                String what = kind.equals("link") ? "is a symbolic link" : "is a directory";
                assertTrue(e.getMessage().contains("its lock file " + lockFile + " " + what), e::getMessage);
                assertFalse(Files.exists(dir.resolve("elsewhere")), "the link was not followed");
            }
        }
    }

    @Test
    void aWriterWaitingForTheLockGetsItWhileTheLeaseholderKeepsAppending() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        // The holder never gives its lease back for idleness, so only noticing the waiter can let it in.
        try (FileAuditLog holder = FileAuditLog.openWithoutIdleRelease(
                        file, FileAuditLog.Options.defaults().withSyncInterval(Duration.ofHours(1)));
                FileAuditLog waiter = open(file)) {
            holder.append(record("holder", "/first"));
            Future<Integer> busy = pool.submit(() -> {
                int n = 0;
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!stop.get() && System.nanoTime() - end < 0) {
                    holder.append(record("holder", "/" + n++));
                }
                return n;
            });
            // Each of these would fail after the lock wait (2 s) if the holder never gave its lease back.
            for (int i = 0; i < 50; i++) {
                waiter.append(record("waiter", "/" + i));
            }
            stop.set(true);
            int held = busy.get(30, TimeUnit.SECONDS);
            assertIntact(1 + held + 50, file);
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    @Test
    void aWaiterIsHandedTheLockAndTheWriterDoesNotTakeItBackBeforeThen() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Path lockFile = dir.resolve(".audit.jsonl.lock");
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        // A hand-over window far longer than the test's pause, so the outcome does not depend on the scheduler.
        try (FileAuditLog holder = FileAuditLog.openWithoutIdleRelease(
                        file,
                        FileAuditLog.Options.defaults().withSyncInterval(Duration.ofHours(1)),
                        Duration.ofSeconds(20));
                FileChannel waiter = FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            holder.append(record("holder", "/first"));
            Future<Integer> busy = pool.submit(() -> {
                int n = 0;
                while (!stop.get()) {
                    holder.append(record("holder", "/" + n++));
                }
                return n;
            });
            // A waiter that says it waits and then looks only once, 30 ms later. Without the hand-over the holder
            // takes the lock again after each append and a single look finds it free only by luck.
            int rounds = 20;
            int got = 0;
            for (int i = 0; i < rounds; i++) {
                FileLock waiting = null;
                while (waiting == null) {
                    try {
                        waiting = waiter.tryLock(1, 1, true);
                    } catch (OverlappingFileLockException e) {
                        // the holder is looking for waiters right now
                    }
                }
                Thread.sleep(30);
                FileLock held = null;
                try {
                    held = waiter.tryLock(0, 1, false);
                } catch (OverlappingFileLockException e) {
                    // the holder has it
                }
                waiting.release();
                if (held != null) {
                    got++;
                    held.release();
                }
                Thread.sleep(5);
            }
            stop.set(true);
            int appended = busy.get(30, TimeUnit.SECONDS);
            assertEquals(rounds, got, "rounds in which the single look found the lock handed over");
            assertTrue(appended > rounds, () -> "the holder went on appending: " + appended);
            assertIntact(1 + appended, file);
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    @Test
    void openingWaitsForALockHeldLongerThanAnAppendWouldWait() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Path lockFile = dir.resolve(".audit.jsonl.lock");
        try (FileAuditLog first = open(file)) {
            first.append(record("first", "/1"));
        }
        try (FileChannel other = FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock held = other.lock(0, 1, false);
            Thread releaser = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(3_000); // past the 2 s an append waits
                    held.release();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try (FileAuditLog second = open(file)) {
                assertFalse(held.isValid(), "opened only once the lock was let go");
                second.append(record("second", "/2"));
            }
            releaser.join();
        }
        assertIntact(2, file);
    }

    @Test
    void anAppendThatWaitedTooLongSaysWhichProcessHeldTheLock() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Path lockFile = dir.resolve(".audit.jsonl.lock");
        try (FileAuditLog log = open(file);
                FileChannel other = FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            log.append(record("s", "/1"));
            Thread.sleep(FileAuditLog.LEASE_IDLE.toMillis() * 3); // the lease of that append has been given back
            try (FileLock held = other.lock(0, 1, false)) {
                AuditUnavailableException e =
                        assertThrows(AuditUnavailableException.class, () -> log.append(record("s", "/2")));
                LockWaitException cause = assertInstanceOf(LockWaitException.class, e.getCause());
                assertTrue(
                        cause.holder()
                                .startsWith("process " + ProcessHandle.current().pid()),
                        () -> cause.holder());
                assertTrue(e.getMessage().contains("has been held by process "), e::getMessage);
            }
            log.append(record("s", "/3"));
        }
        assertIntact(2, file);
    }

    @Test
    void aLogRenamedAwayUnderConstantAppendsIsFollowedToANewFileAtItsPath() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = FileAuditLog.openWithoutIdleRelease(
                file, FileAuditLog.Options.defaults().withSyncInterval(Duration.ofHours(1)))) {
            for (int i = 0; i < 100; i++) {
                log.append(record("s", "/" + i));
            }
            Files.move(file, dir.resolve("moved-by-someone-else.jsonl"));
            // The lease is never given back for idleness here; the periodic look at the file must find the path
            // empty and start a new file there.
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int appended = 0;
            while (!Files.exists(file) && System.nanoTime() - end < 0) {
                log.append(record("s", "/after-" + appended++));
            }
            assertTrue(Files.exists(file), "no new file after " + appended + " appends");
        }
    }

    /** Runs in a child JVM: opens the log, waits for the go file, appends, closes. */
    static final class AppendFromAnotherProcess {
        public static void main(String[] args) throws Exception {
            Path file = Path.of(args[0]);
            Path go = Path.of(args[1]);
            int count = Integer.parseInt(args[2]);
            long maxBytes = Long.parseLong(args[3]);
            try (FileAuditLog log = FileAuditLog.open(
                    file,
                    FileAuditLog.Options.defaults()
                            .withSyncInterval(Duration.ofMillis(50))
                            .withMaxFileBytes(maxBytes))) {
                System.out.println("ready");
                System.out.flush();
                while (!Files.exists(go)) {
                    Thread.sleep(1);
                }
                for (int i = 0; i < count; i++) {
                    log.append(record(ProcessHandle.current().pid() + "", "/" + i));
                }
            }
        }
    }

    @Test
    void processesAppendingToTheSameLogAndRotatingItKeepOneChain() throws Exception {
        Path file = dir.resolve("logs/audit.jsonl");
        Files.createDirectories(file.getParent());
        Path go = dir.resolve("go");
        int processes = 3;
        int perProcess = 400;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> children = new ArrayList<>();
        try {
            for (int p = 0; p < processes; p++) {
                Process child = new ProcessBuilder(
                                java,
                                "-cp",
                                System.getProperty("java.class.path"),
                                AppendFromAnotherProcess.class.getName(),
                                file.toString(),
                                go.toString(),
                                Integer.toString(perProcess),
                                Integer.toString(32 << 10))
                        .redirectError(dir.resolve("child" + p + ".err").toFile())
                        .start();
                children.add(child);
                assertEquals("ready", child.inputReader().readLine(), () -> "child did not start");
            }
            Files.createFile(go);
            for (Process child : children) {
                assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child finished");
                assertEquals(0, child.exitValue(), () -> readQuietly(dir.resolve("child0.err")));
            }
        } finally {
            children.forEach(Process::destroyForcibly);
        }

        List<Path> set = AuditChain.rotationSet(file);
        assertTrue(set.size() > 3, () -> "rotated several times: " + set);
        assertIntact(processes * perProcess, set.toArray(Path[]::new));
    }

    @Test
    void rotationStartsANewFileWhoseFirstRecordLinksToTheLastLineOfTheOldOne() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        long max = 4096;
        try (FileAuditLog log = FileAuditLog.open(
                file, FileAuditLog.Options.defaults().withMaxFileBytes(max).withSyncInterval(Duration.ofHours(1)))) {
            for (int i = 0; i < 60; i++) {
                log.append(record("s", "/" + i));
            }
        }

        List<Path> set = AuditChain.rotationSet(file);
        assertTrue(set.size() >= 4, set::toString);
        for (int i = 0; i < set.size() - 1; i++) {
            assertEquals(file.resolveSibling("audit.jsonl." + (i + 1)), set.get(i), "rotated names are predictable");
            long size = Files.size(set.get(i));
            assertTrue(size >= max && size < max + 1024, () -> "rotated once full: " + size);
            List<String> old = lines(set.get(i));
            String firstOfNext = lines(set.get(i + 1)).get(0);
            assertEquals(
                    Sha256.hex(old.get(old.size() - 1)),
                    MiniJson.parseObject(firstOfNext).get("prev_hash"));
            assertEquals(seq(old.get(old.size() - 1)) + 1, seq(firstOfNext));
        }
        assertEquals(
                "rw-------",
                PosixFilePermissions.toString(Files.getPosixFilePermissions(set.get(set.size() - 1))),
                "the new live file is private too");
        assertIntact(60, set.toArray(Path[]::new));
    }

    @Test
    void aLogReopenedRightAfterARotationContinuesFromTheRotatedFile() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        FileAuditLog.Options options =
                FileAuditLog.Options.defaults().withMaxFileBytes(1).withSyncInterval(Duration.ofHours(1));
        try (FileAuditLog log = FileAuditLog.open(file, options)) {
            log.append(record("s", "/1"));
        }
        // Opening finds the file full and rotates it, leaving an empty live file; nothing is appended.
        FileAuditLog.open(file, options).close();
        assertEquals(0, Files.size(file));
        try (FileAuditLog log = FileAuditLog.open(file, options.withMaxFileBytes(0))) {
            log.append(record("s", "/2"));
        }

        List<Path> set = AuditChain.rotationSet(file);
        assertEquals(List.of(file.resolveSibling("audit.jsonl.1"), file), set);
        assertEquals(2, seq(lines(file).get(0)));
        assertIntact(2, set.toArray(Path[]::new));
    }

    @Test
    void withAKeyEveryLineCarriesAnHmacThatOnlyThatKeyVerifies() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        byte[] secret = "correct horse battery staple, 32+ bytes long".getBytes(StandardCharsets.US_ASCII);
        AuditHmacKey key = AuditHmacKey.fromBytes(secret, "test");
        try (FileAuditLog log = FileAuditLog.open(
                file, FileAuditLog.Options.defaults().withHmacKey(key).withSyncInterval(Duration.ofHours(1)))) {
            log.append(record("s", "/1"));
            log.append(record("s", "/2"));
        }

        for (String line : lines(file)) {
            Map<String, Object> parsed = MiniJson.parseObject(line);
            assertEquals(
                    List.of("v", "seq", "prev_hash", "hmac", "kind"), new ArrayList<>(parsed.keySet()).subList(0, 5));
            assertTrue(String.valueOf(parsed.get("hmac")).matches("[0-9a-f]{64}"), line);
        }
        String text = Files.readString(file);
        assertFalse(text.contains("correct horse"), "the key is never written");
        assertFalse(text.contains(java.util.HexFormat.of().formatHex(secret)), "not even as hex");

        ChainVerifier.Report right = verify(key, file);
        assertTrue(right.intact(), right::toString);
        assertEquals(2, right.hmacChecked());
        ChainVerifier.Report wrong =
                verify(AuditHmacKey.fromBytes("another key that is long enough...".getBytes(), "other"), file);
        assertEquals(ChainVerifier.Kind.BAD_HMAC, wrong.broken().orElseThrow().kind());
        assertEquals(1, wrong.broken().orElseThrow().line());
        ChainVerifier.Report none = verify(null, file);
        assertTrue(none.intact());
        assertEquals(ChainVerifier.Kind.HMAC_UNCHECKED, none.notes().get(0).kind());
    }

    @Test
    void noTwoLinesShareASeq() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog a = open(file)) {
            for (int i = 0; i < 10; i++) {
                a.append(record("s", "/" + i));
                try (FileAuditLog b = open(file)) {
                    b.append(record("b", "/" + i));
                }
            }
        }

        Set<Long> seen = new HashSet<>();
        for (String line : lines(file)) {
            assertTrue(seen.add(seq(line)), line);
        }
        assertIntact(20, file);
    }

    private static byte[] chainedLine(long seq, String prevHash) {
        String json = AuditJson.toLine(record("s", "/")).stripTrailing();
        String v = "{\"v\":" + AuditRecord.SCHEMA_VERSION + ",";
        return json.replace(v, v + "\"seq\":" + seq + ",\"prev_hash\":\"" + prevHash + "\",")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] withNewline(byte[] line) {
        byte[] out = java.util.Arrays.copyOf(line, line.length + 1);
        out[line.length] = '\n';
        return out;
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return e.toString();
        }
    }
}
