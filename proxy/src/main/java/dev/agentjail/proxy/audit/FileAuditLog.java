package dev.agentjail.proxy.audit;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An append-only JSON Lines audit file whose records reach the kernel before {@code append} returns.
 *
 * <p>Durability: {@code append} finishes its {@code write(2)} before returning, so after {@code kill -9} of the JVM no
 * acknowledged record is lost. {@code fsync} happens in group commit every {@code syncInterval} on one daemon thread,
 * so after power loss at most the last {@code syncInterval} of records can be lost. A failed write or fsync makes the
 * sink unhealthy and every append throws until a retry succeeds; the proxy denies requests meanwhile.
 */
public final class FileAuditLog implements AuditSink {

    public static final Duration DEFAULT_SYNC_INTERVAL = Duration.ofSeconds(1);

    private static final Logger LOG = LoggerFactory.getLogger(FileAuditLog.class);
    private static final FileAttribute<Set<PosixFilePermission>> FILE_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final FileAttribute<Set<PosixFilePermission>> DIR_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    /** The two things the log needs from its file; tests substitute one that fails on demand. */
    interface Storage extends Closeable {
        int write(ByteBuffer source) throws IOException;

        void force() throws IOException;
    }

    /** Opens the storage, initially and again after a failure (an interrupted write closes a FileChannel). */
    @FunctionalInterface
    interface StorageOpener {
        Storage open() throws IOException;
    }

    private final String name;
    private final StorageOpener opener;
    private final ScheduledExecutorService syncer;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean dirty = new AtomicBoolean();
    private volatile Storage storage; // replaced only under lock; null after a failed write until reopened
    private volatile boolean writeFailed;
    private volatile boolean syncFailed;
    private volatile boolean closed;
    private boolean tornLine; // guarded by lock: a failed write left a partial line that needs terminating

    FileAuditLog(String name, StorageOpener opener, Duration syncInterval) throws IOException {
        this.name = Objects.requireNonNull(name, "name");
        this.opener = Objects.requireNonNull(opener, "opener");
        if (syncInterval.isNegative() || syncInterval.isZero()) {
            throw new IllegalArgumentException("syncInterval must be positive: " + syncInterval);
        }
        this.storage = opener.open();
        this.syncer = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "agentjail-audit-sync");
            thread.setDaemon(true);
            return thread;
        });
        long nanos = syncInterval.toNanos();
        syncer.scheduleWithFixedDelay(this::sync, nanos, nanos, TimeUnit.NANOSECONDS);
    }

    /** Opens {@code file} with the default one-second group commit. */
    public static FileAuditLog open(Path file) throws IOException {
        return open(file, DEFAULT_SYNC_INTERVAL);
    }

    /**
     * Opens {@code file} for appending, creating missing parent directories 0700 and a new file 0600. Refuses to
     * follow a symbolic link at {@code file}, so nobody can redirect the log by planting one.
     */
    public static FileAuditLog open(Path file, Duration syncInterval) throws IOException {
        Path absolute = file.toAbsolutePath();
        Path parent = absolute.getParent();
        if (parent != null) {
            Files.createDirectories(parent, DIR_MODE);
        }
        StorageOpener opener = () -> new FileStorage(FileChannel.open(
                absolute,
                Set.of(
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND,
                        LinkOption.NOFOLLOW_LINKS),
                FILE_MODE));
        return new FileAuditLog(absolute.toString(), opener, syncInterval);
    }

    @Override
    public void append(AuditRecord record) throws AuditUnavailableException {
        byte[] line = AuditJson.toLine(record).getBytes(StandardCharsets.UTF_8);
        lock.lock();
        try {
            if (closed) {
                throw new AuditUnavailableException("audit log " + name + " is closed");
            }
            if (syncFailed) {
                retrySync();
            }
            write(line);
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
        } finally {
            lock.unlock();
        }
    }

    /** Writes the whole line before returning; called with the lock held. */
    private void write(byte[] line) throws AuditUnavailableException {
        ByteBuffer buffer = ByteBuffer.allocate(line.length + (tornLine ? 1 : 0));
        if (tornLine) {
            // Ends the fragment of an earlier failed write so that it stays one unparsable line, not two merged.
            buffer.put((byte) '\n');
        }
        buffer.put(line).flip();
        try {
            if (storage == null) {
                storage = opener.open();
            }
            while (buffer.hasRemaining()) {
                storage.write(buffer);
            }
        } catch (IOException e) {
            if (buffer.position() > 0) {
                tornLine = buffer.get(buffer.position() - 1) != '\n';
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
        }
        tornLine = false;
        dirty.set(true);
        if (writeFailed) {
            writeFailed = false;
            LOG.warn("audit log {} is writable again", name);
        }
    }

    /** Called with the lock held after a background fsync failed: nothing is acknowledged until one succeeds. */
    private void retrySync() throws AuditUnavailableException {
        try {
            if (storage == null) {
                storage = opener.open();
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
            if (!closed && !syncFailed) {
                LOG.error("audit log {}: fsync failed; requests are refused until it succeeds", name, e);
            }
            syncFailed = true;
        }
    }

    private static void closeQuietly(Storage s) {
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
