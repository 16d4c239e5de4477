package dev.agentjail.proxy.audit;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An append-only, hash-chained JSON Lines audit file whose records reach the kernel before {@code append} returns.
 *
 * <p>Durability: {@code append} finishes its {@code write(2)} before returning, so after {@code kill -9} of the JVM no
 * acknowledged record is lost. {@code fsync} happens in group commit every {@code syncInterval} on one daemon thread,
 * so after power loss at most the last {@code syncInterval} of records can be lost. A failed write or fsync makes the
 * sink unhealthy and every append throws until a retry succeeds; the proxy denies requests meanwhile.
 *
 * <p>Tamper evidence: every line carries {@code seq} and {@code prev_hash} (and, with a key, {@code hmac}) right after
 * {@code "v"}; see {@link AuditChain}. The chain continues across reopening, rotation and several processes writing
 * the same file: appends hold an advisory lock on byte 0 of a sidecar file {@code .<name>.lock} and re-read the end of
 * the file whenever another writer has touched it since.
 *
 * <p>The lock is leased: taking it, checking the file and giving it back cost three system calls, as much as the
 * write itself, so a writer that appends again within {@link #LEASE_IDLE} of an append that took the lock keeps it
 * between appends and writes without looking at the file again (one that appends less often takes it per append: a
 * lease would cost it more in checks than it saves). A writer waiting for the lock says so with a shared lock on byte
 * 1; the holder looks for one at its first append {@link #LEASE_TICK} after its last look, and every
 * {@link #LEASE_BACKGROUND_TICK} on a background thread when it does not append, and then gives the lock back and
 * takes it per append for {@link #SHARED_PERIOD}, as it does after {@link #LEASE_IDLE} without an append. The file is
 * looked at again at least every {@link #LEASE_REFOLLOW}, so a log renamed or removed by someone else is followed even
 * under constant load.
 */
public final class FileAuditLog implements AuditSink {

    public static final Duration DEFAULT_SYNC_INTERVAL = Duration.ofSeconds(1);

    /** Rotation threshold unless configured: the live file is rotated once it has reached 64 MiB. */
    public static final long DEFAULT_MAX_FILE_BYTES = 64L << 20;

    private static final Logger LOG = LoggerFactory.getLogger(FileAuditLog.class);
    private static final FileAttribute<Set<PosixFilePermission>> FILE_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final FileAttribute<Set<PosixFilePermission>> DIR_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    /** How long an append waits for another process's append (a few microseconds normally) before failing closed. */
    private static final Duration LOCK_WAIT = Duration.ofSeconds(2);

    /**
     * How long opening waits for the lock. Longer than {@link #LOCK_WAIT}: a session that starts while another writer
     * is stalled (a machine so loaded that a process gets no CPU for seconds) would rather start late than not at all,
     * and nothing is waiting on its records yet. It says on its log after {@link #LOCK_WAIT} that it waits, and for
     * which process.
     */
    static final Duration OPEN_LOCK_WAIT = Duration.ofSeconds(30);

    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** A failed rotation (say, the directory became read-only) is not retried on every append. */
    private static final Duration ROTATION_RETRY = Duration.ofMinutes(1);

    /** How often an append under a lease checks it for waiting writers, idleness and age. */
    static final Duration LEASE_TICK = Duration.ofMillis(1);

    /**
     * How often a background thread checks a held lease. Not {@link #LEASE_TICK}: a thread woken every millisecond
     * while a session appends every few cost a third of the launcher's audit CPU (docs/benchmarks.md run 29); a busy
     * writer checks at its appends instead.
     */
    static final Duration LEASE_BACKGROUND_TICK = Duration.ofMillis(5);

    /** A lease with no append for this long is given back. */
    static final Duration LEASE_IDLE = Duration.ofMillis(10);

    /** After another writer was seen waiting, the lock is taken per append for this long before leasing again. */
    static final Duration SHARED_PERIOD = Duration.ofMillis(50);

    /**
     * In {@link #SHARED_PERIOD}, a writer that finds others waiting lets them take the lock first, for at most this
     * long: fcntl locks are not handed over in order, and a writer that takes the lock again a microsecond after
     * giving it back can keep one that polls for it out until its {@link #LOCK_WAIT} runs out.
     */
    static final Duration HANDOVER_WAIT = Duration.ofMillis(50);

    /**
     * After a waiter did not take the lock within {@link #HANDOVER_WAIT} (stopped, or gone without unlocking yet), no
     * hand-over is waited for during this long, so that a stopped process costs a busy writer at most 5 % of its time.
     */
    static final Duration HANDOVER_PAUSE = Duration.ofSeconds(1);

    /** Under a lease the file is looked at again (lstat, and the tail if it changed) at least this often. */
    static final Duration LEASE_REFOLLOW = Duration.ofMillis(100);

    /** The byte of the lock file whose exclusive lock orders appends. */
    private static final long APPEND_BYTE = 0;

    /** The byte of the lock file that waiting writers lock shared, so a leaseholder knows to give the lock back. */
    private static final long WAITING_BYTE = 1;

    /**
     * How the log is written.
     *
     * @param syncInterval the group-commit interval of fsync; positive
     * @param maxFileBytes rotate the live file once it is this large; 0 never rotates
     * @param hmacKey sign every line with this key, or null for no HMAC
     */
    public record Options(Duration syncInterval, long maxFileBytes, AuditHmacKey hmacKey) {
        public Options {
            Objects.requireNonNull(syncInterval, "syncInterval");
            if (syncInterval.isNegative() || syncInterval.isZero()) {
                throw new IllegalArgumentException("syncInterval must be positive: " + syncInterval);
            }
            if (maxFileBytes < 0) {
                throw new IllegalArgumentException("maxFileBytes must not be negative: " + maxFileBytes);
            }
        }

        /** One-second group commit, rotation at 64 MiB, no HMAC. */
        public static Options defaults() {
            return new Options(DEFAULT_SYNC_INTERVAL, DEFAULT_MAX_FILE_BYTES, null);
        }

        public Options withSyncInterval(Duration value) {
            return new Options(value, maxFileBytes, hmacKey);
        }

        public Options withMaxFileBytes(long value) {
            return new Options(syncInterval, value, hmacKey);
        }

        public Options withHmacKey(AuditHmacKey value) {
            return new Options(syncInterval, maxFileBytes, value);
        }
    }

    /** The two things the log needs from its file; tests substitute one that fails on demand. */
    interface Storage extends Closeable {
        int write(ByteBuffer source) throws IOException;

        void force() throws IOException;
    }

    /**
     * Opens the storage for appending to {@code file}, initially, after a failure (an interrupted write closes a
     * FileChannel) and after a rotation.
     */
    @FunctionalInterface
    interface StorageOpener {
        Storage open(Path file) throws IOException;
    }

    /** What this writer knows about the live file after its own last write; null fields mean "look again". */
    private record Position(Object fileKey, long size, ChainTail tail) {}

    private final Path file;
    private final Path lockFile;
    private final String name;
    private final StorageOpener opener;
    private final long maxFileBytes;
    private final ChainEncoder encoder;
    private final ScheduledExecutorService syncer; // the group commit and the lease's ticks, on two threads
    private final ReentrantLock lock = new ReentrantLock();
    private final long leaseIdleNanos;
    private final long handoverWaitNanos;
    private final AtomicBoolean dirty = new AtomicBoolean();
    private volatile Storage storage; // replaced only under lock; null after a failed write until reopened
    private volatile boolean writeFailed;
    private volatile boolean syncFailed;
    private volatile boolean closed;
    private Object storageKey; // guarded by lock: the file key of the inode storage writes to
    private Position position; // guarded by lock: null when the file must be looked at again
    private FileChannel lockChannel; // guarded by lock
    private Object lockKey; // the lock file's identity when lockChannel was opened; guarded by lock
    private boolean rotationFailed; // guarded by lock: only the first failure of a series is logged
    private long nextRotationAttempt; // guarded by lock: System.nanoTime() after which a failed rotation is retried
    private FileLock lease; // guarded by lock: the process lock kept between appends, or null
    private long leaseFollowedAt; // guarded by lock: System.nanoTime() of the lease's last look at the file
    private boolean refollow; // guarded by lock: the next append under the lease looks at the file first
    private long lastAppendAt; // guarded by lock: System.nanoTime() of the last append
    private long sharedUntil; // guarded by lock: System.nanoTime() before which no lease is kept
    private volatile boolean tickScheduled; // set under the lock; a tick that finds it taken reschedules itself
    private volatile boolean checkDue; // a tick asks the next append (or itself) to run leaseCheck
    private long checkedAt; // guarded by lock: System.nanoTime() of the last leaseCheck
    private long lockedAt; // guarded by lock: System.nanoTime() of the last append that took the process lock itself
    private long handoverPausedUntil; // guarded by lock: System.nanoTime() before which no hand-over is waited for
    private boolean lockedOnce; // guarded by lock: lockedAt is set

    FileAuditLog(Path file, StorageOpener opener, Options options) throws IOException {
        this(file, opener, options, LEASE_IDLE);
    }

    FileAuditLog(Path file, StorageOpener opener, Options options, Duration leaseIdle) throws IOException {
        this(file, opener, options, leaseIdle, HANDOVER_WAIT);
    }

    /**
     * {@code leaseIdle}: tests lengthen it so that only the check for waiting writers can end a lease; {@code
     * handoverWait}: tests lengthen it so that a waiter's turn does not depend on the scheduler.
     */
    FileAuditLog(Path file, StorageOpener opener, Options options, Duration leaseIdle, Duration handoverWait)
            throws IOException {
        this.leaseIdleNanos = leaseIdle.toNanos();
        this.handoverWaitNanos = handoverWait.toNanos();
        this.file = file.toAbsolutePath();
        this.lockFile = this.file.resolveSibling("." + this.file.getFileName() + ".lock");
        this.name = this.file.toString();
        this.opener = Objects.requireNonNull(opener, "opener");
        this.maxFileBytes = options.maxFileBytes();
        this.encoder = new ChainEncoder(
                options.hmacKey() == null ? null : options.hmacKey().newMac());
        lock.lock();
        try {
            // Fails here, not at the first request, if the file, its lock or its chain cannot be read.
            FileLock held = lockProcesses(OPEN_LOCK_WAIT);
            try {
                follow();
            } finally {
                releaseQuietly(held);
            }
        } catch (IOException e) {
            closeQuietly(storage);
            if (lockChannel != null) {
                lockChannel.close();
            }
            throw e;
        } finally {
            lock.unlock();
        }
        this.sharedUntil = System.nanoTime();
        this.handoverPausedUntil = this.sharedUntil;
        // Two threads: a slow fsync must not keep the lease from being given back to a waiting writer.
        this.syncer = Executors.newScheduledThreadPool(2, task -> {
            Thread thread = new Thread(task, "agentjail-audit-sync");
            thread.setDaemon(true);
            return thread;
        });
        long nanos = options.syncInterval().toNanos();
        syncer.scheduleWithFixedDelay(this::sync, nanos, nanos, TimeUnit.NANOSECONDS);
    }

    /** Opens {@code file} with the default options: one-second group commit, rotation at 64 MiB, no HMAC. */
    public static FileAuditLog open(Path file) throws IOException {
        return open(file, Options.defaults());
    }

    /** Opens {@code file} with the default options but the given group-commit interval. */
    public static FileAuditLog open(Path file, Duration syncInterval) throws IOException {
        return open(file, Options.defaults().withSyncInterval(syncInterval));
    }

    /**
     * Opens {@code file} for appending, creating missing parent directories 0700 and a new file 0600, and continues
     * the chain from the end of the file (or of its newest rotated file). Refuses to follow a symbolic link at
     * {@code file}, so nobody can redirect the log by planting one.
     */
    public static FileAuditLog open(Path file, Options options) throws IOException {
        Path absolute = file.toAbsolutePath();
        Path parent = absolute.getParent();
        if (parent != null) {
            Files.createDirectories(parent, DIR_MODE);
        }
        return new FileAuditLog(absolute, FileAuditLog::openFile, options);
    }

    /** As {@link #open(Path, Options)}, with a lease that is never given back for idleness (tests). */
    static FileAuditLog openWithoutIdleRelease(Path file, Options options) throws IOException {
        return openWithoutIdleRelease(file, options, HANDOVER_WAIT);
    }

    /** As {@link #openWithoutIdleRelease(Path, Options)}, letting waiters in for up to {@code handoverWait}. */
    static FileAuditLog openWithoutIdleRelease(Path file, Options options, Duration handoverWait) throws IOException {
        Path absolute = file.toAbsolutePath();
        Files.createDirectories(absolute.getParent(), DIR_MODE);
        return new FileAuditLog(absolute, FileAuditLog::openFile, options, Duration.ofDays(1), handoverWait);
    }

    static Storage openFile(Path path) throws IOException {
        return new FileStorage(FileChannel.open(
                path,
                Set.of(
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND,
                        LinkOption.NOFOLLOW_LINKS),
                FILE_MODE));
    }

    /** The live file this log appends to. */
    public Path file() {
        return file;
    }

    @Override
    public void append(AuditRecord record) throws AuditUnavailableException {
        appendLines(List.of(AuditJson.toLine(record).getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Appends {@code records} in order, chained as single appends would be, in one write: a batch of the jail's exec
     * and file records costs one lock and one {@code write(2)} instead of one each.
     */
    @Override
    public void appendAll(List<AuditRecord> records) throws AuditUnavailableException {
        if (records.isEmpty()) {
            return;
        }
        List<byte[]> lines = new ArrayList<>(records.size());
        for (AuditRecord record : records) {
            lines.add(AuditJson.toLine(record).getBytes(StandardCharsets.UTF_8));
        }
        appendLines(lines);
    }

    private void appendLines(List<byte[]> lines) throws AuditUnavailableException {
        lock.lock();
        try {
            if (closed) {
                throw new AuditUnavailableException("audit log " + name + " is closed");
            }
            if (syncFailed) {
                retrySync();
            }
            write(lines);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean healthy() {
        return !closed && !writeFailed && !syncFailed;
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            lock.unlock();
        }
        syncer.shutdown();
        try {
            syncer.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
        try {
            Storage current = storage;
            if (current != null) {
                try {
                    current.force();
                } catch (IOException e) {
                    LOG.error("audit log {}: final fsync failed; the last records may not survive power loss", name, e);
                }
                closeQuietly(current);
                storage = null;
            }
            endLease();
            if (lockChannel != null) {
                try {
                    lockChannel.close();
                } catch (IOException e) {
                    // Nothing is held any more; the descriptor goes with the process anyway.
                }
                lockChannel = null;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Chains and writes the whole lines, in order, before returning; called with the lock held. */
    private void write(List<byte[]> jsons) throws AuditUnavailableException {
        ByteBuffer buffer = null;
        long now = System.nanoTime();
        if (lease != null && (checkDue || now - checkedAt >= LEASE_TICK.toNanos())) {
            // A busy writer checks its lease itself: the tick cannot count on getting the lock between appends.
            leaseCheck(now);
        }
        FileLock held = lease;
        try {
            if (held == null) {
                held = lockProcesses(LOCK_WAIT);
                follow();
                leaseFollowedAt = now;
            } else if (refollow || storage == null || position == null) {
                // Nobody else appends while the lease is held, but the file may have been renamed or removed.
                follow();
                refollow = false;
                leaseFollowedAt = now;
            } else if (maxFileBytes > 0
                    && position.size() >= maxFileBytes
                    && !position.tail().torn()) {
                rotate();
            }
            Position at = position;
            ChainTail tail = at.tail();
            long seq = tail.nextSeq();
            byte[] prevHash = tail.prevHash();
            boolean torn = tail.torn();
            byte[] line;
            if (jsons.size() == 1) {
                line = encoder.encode(jsons.get(0), seq++, prevHash, torn);
                prevHash = encoder.lineHash().clone();
            } else {
                java.io.ByteArrayOutputStream lines = new java.io.ByteArrayOutputStream(1024 * jsons.size());
                for (byte[] json : jsons) {
                    lines.writeBytes(encoder.encode(json, seq++, prevHash, torn));
                    prevHash = encoder.lineHash().clone();
                    torn = false;
                }
                line = lines.toByteArray();
            }
            buffer = ByteBuffer.wrap(line);
            while (buffer.hasRemaining()) {
                storage.write(buffer);
            }
            position = new Position(at.fileKey(), at.size() + line.length, new ChainTail(seq, prevHash, false));
        } catch (IOException e) {
            // Whatever reached the file (perhaps a fragment of the line) is read back before the next write.
            position = null;
            if (held == lease) {
                lease = null;
            }
            Storage failed = storage;
            storage = null;
            if (failed != null) {
                closeQuietly(failed);
            }
            if (!writeFailed) {
                LOG.error("audit log {} is unwritable; requests are refused until it recovers", name, e);
            }
            writeFailed = true;
            throw new AuditUnavailableException("audit log " + name + " is unwritable: " + e.getMessage(), e);
        } finally {
            if (held != null && held != lease) {
                keepOrRelease(held, now);
            }
        }
        lastAppendAt = now;
        dirty.set(true);
        if (writeFailed) {
            writeFailed = false;
            LOG.warn("audit log {} is writable again", name);
        }
    }

    /**
     * Keeps the process lock {@code held} as the lease unless another writer was seen waiting lately; called with the
     * lock held, after a write that took the process lock itself.
     */
    private void keepOrRelease(FileLock held, long now) {
        boolean again = lockedOnce && now - lockedAt < leaseIdleNanos;
        lockedAt = now;
        lockedOnce = true;
        if (!again || position == null || now - sharedUntil < 0 || closed) {
            releaseQuietly(held);
            return;
        }
        lease = held;
        checkedAt = now; // the next look for waiting writers is due LEASE_TICK from here
        if (!tickScheduled) {
            scheduleTick();
        }
    }

    private void scheduleTick() {
        try {
            syncer.schedule(this::leaseTick, LEASE_BACKGROUND_TICK.toNanos(), TimeUnit.NANOSECONDS);
            tickScheduled = true;
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // Closing: close() gives the lease back.
            endLease();
        }
    }

    /**
     * Runs every {@link #LEASE_BACKGROUND_TICK} while a lease is held. It marks a check as due; when an append holds the lock, that
     * append runs the check, otherwise the tick runs it itself.
     */
    private void leaseTick() {
        checkDue = true;
        if (!lock.tryLock()) {
            reschedule();
            return;
        }
        try {
            if (lease != null) {
                leaseCheck(System.nanoTime());
            }
            if (lease != null) {
                reschedule();
            } else {
                tickScheduled = false;
            }
        } catch (RuntimeException e) {
            // Never leave the lease held with nobody ticking for it.
            endLease();
            tickScheduled = false;
            LOG.debug("audit log {}: lease check failed", name, e);
        } finally {
            lock.unlock();
        }
    }

    private void reschedule() {
        try {
            syncer.schedule(this::leaseTick, LEASE_BACKGROUND_TICK.toNanos(), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // Closing: close() gives the lease back.
        }
    }

    /**
     * Gives the lease back when another writer waits or when idle, and asks for a fresh look at the file when the last
     * one is {@link #LEASE_REFOLLOW} old. Called with the lock held and a lease.
     */
    private void leaseCheck(long now) {
        checkDue = false;
        checkedAt = now;
        if (!lockFileStillCurrent()) {
            // Another writer may lock the file now at the path: the lease's lock excludes nobody any more.
            endLease();
            dropLockChannel();
        } else if (othersWaiting()) {
            sharedUntil = now + SHARED_PERIOD.toNanos();
            endLease();
        } else if (now - lastAppendAt >= leaseIdleNanos) {
            endLease();
        } else if (now - leaseFollowedAt >= LEASE_REFOLLOW.toNanos()) {
            refollow = true;
        }
    }

    private boolean lockFileStillCurrent() {
        try {
            return lockFileCurrent();
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether another writer holds the waiting byte shared, i.e. waits for the append lock. */
    private boolean othersWaiting() {
        try {
            FileLock probe = lockChannel.tryLock(WAITING_BYTE, 1, false);
            if (probe == null) {
                return true;
            }
            probe.release();
            return false;
        } catch (OverlappingFileLockException e) {
            return true; // another log on the same file in this JVM waits
        } catch (IOException e) {
            return true; // cannot tell: let the others in
        }
    }

    /** Gives the lease back; the next append takes the lock and looks at the file again. Called with the lock held. */
    private void endLease() {
        if (lease != null) {
            releaseQuietly(lease);
            lease = null;
        }
    }

    /**
     * Makes {@link #storage} and {@link #position} describe the live file as it is now, whoever wrote it last, and
     * rotates it when it is full. Called with the lock and the process lock held.
     */
    private void follow() throws IOException {
        if (storage == null) {
            reopenStorage();
        }
        BasicFileAttributes now = stat(file);
        if (now == null || !Objects.equals(now.fileKey(), storageKey)) {
            // Rotated or replaced by another writer, or removed: every writer follows the path.
            retire(storage, false);
            storage = null;
            reopenStorage();
            now = stat(file);
            if (now == null) {
                throw new NoSuchFileException(name, null, "vanished right after it was opened");
            }
        }
        if (position == null || !Objects.equals(position.fileKey(), now.fileKey()) || position.size() != now.size()) {
            position = new Position(now.fileKey(), now.size(), ChainTail.read(file));
        }
        if (maxFileBytes > 0
                && position.size() >= maxFileBytes
                && !position.tail().torn()) {
            rotate();
        }
    }

    private void reopenStorage() throws IOException {
        storage = opener.open(file);
        BasicFileAttributes opened = stat(file);
        storageKey = opened == null ? null : opened.fileKey();
        position = null;
    }

    /**
     * Renames the full live file to the next free {@code <name>.<n>} and starts a new one whose first record links to
     * the last line of the old one. A failed rename leaves the log appending to the full file and is retried after
     * {@link #ROTATION_RETRY}.
     */
    private void rotate() throws IOException {
        if (rotationFailed && System.nanoTime() - nextRotationAttempt < 0) {
            return;
        }
        Path target = AuditChain.rotatedPath(file, AuditChain.nextRotationIndex(file));
        try {
            Files.move(file, target);
        } catch (IOException e) {
            if (!rotationFailed) {
                LOG.error("audit log {}: rotation to {} failed; appending to the full file", name, target, e);
            }
            rotationFailed = true;
            nextRotationAttempt = System.nanoTime() + ROTATION_RETRY.toNanos();
            return;
        }
        if (rotationFailed) {
            rotationFailed = false;
            LOG.warn("audit log {} can be rotated again", name);
        }
        // The group commit only ever forces the live file: the old one is forced (and the rename made durable) now,
        // on the syncer's thread.
        retire(storage, true);
        storage = null;
        reopenStorage();
        // The new file is empty, so this continues from the end of the file just rotated.
        BasicFileAttributes now = stat(file);
        position = new Position(now.fileKey(), now.size(), ChainTail.read(file));
    }

    /** Makes the rename survive power loss; best effort, as the group commit is for the records themselves. */
    private void forceDirectory() {
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException e) {
            LOG.debug("audit log {}: cannot fsync its directory", name, e);
        }
    }

    /**
     * Takes the advisory lock that orders appends between processes (and between logs on the same file in this JVM),
     * waiting at most {@code wait}. Shortly after others were seen waiting, they are let in first ({@link
     * #HANDOVER_WAIT}).
     */
    private FileLock lockProcesses(Duration wait) throws IOException {
        long start = System.nanoTime();
        long deadline = start + wait.toNanos();
        long backoff = 10_000;
        boolean told = false;
        FileLock waiting = null;
        try {
            openLockChannel();
            if (start - sharedUntil < 0 && start - handoverPausedUntil >= 0) {
                handOver(start);
            }
            while (true) {
                openLockChannel();
                try {
                    FileLock held = lockChannel.tryLock(APPEND_BYTE, 1, false);
                    if (held != null && !lockFileCurrent()) {
                        LOG.warn(
                                "audit log {}: its lock file {} was removed or replaced; locking the one there now",
                                name,
                                lockFile);
                        dropLockChannel();
                        waiting = null;
                        held = null;
                        openLockChannel();
                    }
                    if (held != null) {
                        if (told) {
                            LOG.warn(
                                    "audit log {}: got its lock after {} ms",
                                    name,
                                    (System.nanoTime() - start) / 1_000_000);
                        }
                        return held;
                    }
                } catch (OverlappingFileLockException e) {
                    // Another log on the same file in this JVM holds it; wait for it like for another process.
                }
                if (waiting == null) {
                    waiting = announceWaiting();
                }
                long now = System.nanoTime();
                if (now - deadline > 0) {
                    throw new LockWaitException(lockFile, wait, LockHolders.describe(lockFile, APPEND_BYTE));
                }
                if (!told && wait.compareTo(LOCK_WAIT) > 0 && now - start > LOCK_WAIT.toNanos()) {
                    told = true;
                    LOG.warn(
                            "audit log {}: waiting for its lock {}, held by {}, for up to {} s",
                            name,
                            lockFile,
                            LockHolders.describe(lockFile, APPEND_BYTE),
                            wait.toSeconds());
                }
                LockSupport.parkNanos(backoff);
                backoff = Math.min(backoff * 2, MAX_BACKOFF_NANOS);
            }
        } finally {
            if (waiting != null && waiting.isValid()) {
                releaseQuietly(waiting);
            }
        }
    }

    private void openLockChannel() throws IOException {
        if (lockChannel == null || !lockChannel.isOpen()) {
            lockKey = null;
            try {
                lockChannel = FileChannel.open(
                        lockFile,
                        // READ too: the waiting byte is locked shared, which needs a readable channel.
                        Set.of(
                                StandardOpenOption.CREATE,
                                StandardOpenOption.READ,
                                StandardOpenOption.WRITE,
                                LinkOption.NOFOLLOW_LINKS),
                        FILE_MODE);
            } catch (IOException e) {
                BasicFileAttributes there = stat(lockFile);
                if (there != null && !there.isRegularFile()) {
                    String what = there.isSymbolicLink()
                            ? "a symbolic link"
                            : there.isDirectory() ? "a directory" : "not a regular file";
                    throw new IOException(
                            "its lock file " + lockFile + " is " + what + ", which no agentjail makes; remove it (the"
                                    + " next writer makes it again)",
                            e);
                }
                throw e;
            }
            BasicFileAttributes opened = stat(lockFile);
            lockKey = opened == null ? null : opened.fileKey();
        }
    }

    /**
     * Whether the lock file this writer locks is still the one at its path. Someone who removes or replaces it (by hand:
     * no writer does) would otherwise let the next writer lock a new file while this one locks the old, and both
     * append at once.
     */
    private boolean lockFileCurrent() throws IOException {
        BasicFileAttributes now = stat(lockFile);
        return now != null && lockKey != null && Objects.equals(now.fileKey(), lockKey);
    }

    /** Drops the lock channel (and with it every lock this process holds on its file), so the next look opens anew. */
    private void dropLockChannel() {
        FileChannel old = lockChannel;
        lockChannel = null;
        lockKey = null;
        if (old != null) {
            try {
                old.close();
            } catch (IOException e) {
                LOG.debug("audit log {}: cannot close the old lock file", name, e);
            }
        }
    }

    /**
     * Waits, at most {@link #HANDOVER_WAIT}, until no other writer says it waits: each waiter lets go of the waiting
     * byte once it holds the append lock, which this writer does not take meanwhile. Called with the lock held.
     */
    private void handOver(long start) {
        long backoff = 10_000;
        while (othersWaiting()) {
            if (System.nanoTime() - start > handoverWaitNanos) {
                handoverPausedUntil = System.nanoTime() + HANDOVER_PAUSE.toNanos();
                return;
            }
            LockSupport.parkNanos(backoff);
            backoff = Math.min(backoff * 2, MAX_BACKOFF_NANOS / 4);
        }
    }

    /**
     * Tells a leaseholder that this writer waits: a shared lock on the waiting byte, or null when that is not possible
     * right now (the holder is probing it, or another log in this JVM already waits), which the next round retries.
     */
    private FileLock announceWaiting() throws IOException {
        try {
            return lockChannel.tryLock(WAITING_BYTE, 1, true);
        } catch (OverlappingFileLockException e) {
            return null;
        }
    }

    /** Called with the lock held after a background fsync failed: nothing is acknowledged until one succeeds. */
    private void retrySync() throws AuditUnavailableException {
        try {
            if (storage == null) {
                storage = opener.open(file);
                BasicFileAttributes opened = stat(file);
                storageKey = opened == null ? null : opened.fileKey();
            }
            storage.force();
        } catch (IOException e) {
            throw new AuditUnavailableException("audit log " + name + " cannot be synced: " + e.getMessage(), e);
        }
        syncFailed = false;
        LOG.warn("audit log {} can be synced again", name);
    }

    /** The group commit; runs on the syncer thread and never holds the lock while waiting for the disk. */
    private void sync() {
        if (!dirty.getAndSet(false)) {
            return;
        }
        Storage current = storage;
        try {
            if (current != null) {
                current.force();
                if (syncFailed) {
                    syncFailed = false;
                    LOG.warn("audit log {} can be synced again", name);
                }
            }
        } catch (IOException | RuntimeException e) {
            // A RuntimeException would silently cancel the periodic task, so it is caught here too.
            dirty.set(true);
            if (current != storage) {
                // Replaced meanwhile (rotation, another writer's rotation, a failure): whoever replaced it forced it
                // or reported the failure; the next round syncs the new one.
                return;
            }
            if (!closed && !syncFailed) {
                LOG.error("audit log {}: fsync failed; requests are refused until it succeeds", name, e);
            }
            syncFailed = true;
        }
    }

    /**
     * Forces and closes a file that is no longer the live one (rotated, or replaced by another writer) on the syncer's
     * thread: its last records become durable right away, within the group commit's bound like any record, and the
     * append that found the file full does not wait for the disk (an fsync of up to a second's records, on the event
     * loop, was a stall of tens of milliseconds for every request in flight). {@code renamed}: also make the rename
     * durable. Called with the lock held.
     */
    private void retire(Storage old, boolean renamed) {
        if (old == null) {
            return;
        }
        Runnable work = () -> {
            try {
                forceAndClose(old);
            } catch (IOException e) {
                LOG.error(
                        "audit log {}: fsync of the file it replaced failed; its last records may not survive"
                                + " power loss",
                        name,
                        e);
            }
            if (renamed) {
                forceDirectory();
            }
        };
        if (syncer == null) {
            work.run(); // opening found the file full: the syncer does not exist yet
            return;
        }
        try {
            syncer.execute(work);
        } catch (RejectedExecutionException e) {
            work.run(); // closing: the syncer takes no more work, so this thread does it
        }
    }

    /** Forces {@code s} (so replacing it loses no durability) and closes it. */
    private void forceAndClose(Storage s) throws IOException {
        if (s == null) {
            return;
        }
        try {
            s.force();
        } finally {
            closeQuietly(s);
        }
    }

    private static BasicFileAttributes stat(Path path) throws IOException {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private static void releaseQuietly(FileLock held) {
        try {
            held.release();
        } catch (IOException e) {
            // The channel is gone (closed by an interrupt); closing it released the lock.
        }
    }

    private static void closeQuietly(Storage s) {
        if (s == null) {
            return;
        }
        try {
            s.close();
        } catch (IOException e) {
            // The storage is being abandoned after a failure; the original error is the one that matters.
        }
    }

    /** The production storage: a FileChannel opened with APPEND, so every write lands at the current end. */
    private record FileStorage(FileChannel channel) implements Storage {
        @Override
        public int write(ByteBuffer source) throws IOException {
            return channel.write(source);
        }

        @Override
        public void force() throws IOException {
            channel.force(false);
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}
