package dev.agentjail.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * Resource limits for a jail session: the wall-clock {@code timeout}, address space or cgroup
 * memory ({@code memoryBytes}), RLIMIT_NPROC ({@code processes}), RLIMIT_NOFILE ({@code
 * openFiles}), RLIMIT_FSIZE ({@code fileSizeBytes}) and the size of the jail's {@code /tmp} tmpfs
 * ({@code tmpSizeBytes}). Every value is positive and bounded.
 */
public record Limits(
        Duration timeout, long memoryBytes, int processes, int openFiles, long fileSizeBytes, long tmpSizeBytes) {
    /** The longest session a policy can ask for. */
    public static final Duration MAX_TIMEOUT = Duration.ofDays(30);

    /** The largest size a policy can ask for: 1 TiB. */
    public static final long MAX_SIZE = 1L << 40;

    /** The kernel's ceiling for pid_max, 2^22. */
    public static final int MAX_PROCESSES = 1 << 22;

    /** Linux's default {@code fs.nr_open}, the ceiling for RLIMIT_NOFILE. */
    public static final int MAX_OPEN_FILES = 1 << 20;

    public static final Duration DEFAULT_TIMEOUT = Duration.ofHours(12);
    public static final long DEFAULT_MEMORY_BYTES = 16L << 30;
    public static final int DEFAULT_PROCESSES = 4096;
    public static final int DEFAULT_OPEN_FILES = 4096;
    public static final long DEFAULT_FILE_SIZE_BYTES = 16L << 30;
    public static final long DEFAULT_TMP_SIZE_BYTES = 1L << 30;

    public Limits {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("timeout must be positive and at most 30 days: " + timeout);
        }
        checkSize("memoryBytes", memoryBytes);
        checkSize("fileSizeBytes", fileSizeBytes);
        checkSize("tmpSizeBytes", tmpSizeBytes);
        checkCount("processes", processes, MAX_PROCESSES);
        checkCount("openFiles", openFiles, MAX_OPEN_FILES);
    }

    /** 12h, 16 GiB of memory, 4096 processes, 4096 open files, 16 GiB files, 1 GiB of /tmp. */
    public static Limits defaults() {
        return new Limits(
                DEFAULT_TIMEOUT,
                DEFAULT_MEMORY_BYTES,
                DEFAULT_PROCESSES,
                DEFAULT_OPEN_FILES,
                DEFAULT_FILE_SIZE_BYTES,
                DEFAULT_TMP_SIZE_BYTES);
    }

    /** The same limits with another timeout, for a command-line override. */
    public Limits withTimeout(Duration newTimeout) {
        return new Limits(newTimeout, memoryBytes, processes, openFiles, fileSizeBytes, tmpSizeBytes);
    }

    private static void checkSize(String name, long bytes) {
        if (bytes < 1 || bytes > MAX_SIZE) {
            throw new IllegalArgumentException(name + " must be between 1 and 1 TiB: " + bytes);
        }
    }

    private static void checkCount(String name, int count, int max) {
        if (count < 1 || count > max) {
            throw new IllegalArgumentException(name + " must be between 1 and " + max + ": " + count);
        }
    }
}
