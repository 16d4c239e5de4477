package dev.agentjail.policy;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * Resource limits for a jail session: the wall-clock {@code timeout}, the memory the session's processes may use
 * together ({@code memoryBytes}, a cgroup limit), the number of its processes ({@code processes}), RLIMIT_NOFILE
 * ({@code openFiles}), RLIMIT_FSIZE ({@code fileSizeBytes}), the size of the jail's {@code /tmp} tmpfs ({@code
 * tmpSizeBytes}), an optional RLIMIT_AS ({@code addressSpaceBytes}, 0: none) and an optional CPU quota in thousandths
 * of a CPU ({@code cpuMillis}, 0: none). {@code explicit} names the keys a policy wrote ({@code memory}, {@code
 * processes}, ...): a limit the policy asked for must be enforced, a default may be reported instead. Every value is
 * positive and bounded.
 */
public record Limits(
        Duration timeout,
        long memoryBytes,
        int processes,
        int openFiles,
        long fileSizeBytes,
        long tmpSizeBytes,
        long addressSpaceBytes,
        int cpuMillis,
        Set<String> explicit) {
    /** The longest session a policy can ask for. */
    public static final Duration MAX_TIMEOUT = Duration.ofDays(30);

    /** The largest size a policy can ask for: 1 TiB. */
    public static final long MAX_SIZE = 1L << 40;

    /** The kernel's ceiling for pid_max, 2^22. */
    public static final int MAX_PROCESSES = 1 << 22;

    /** Linux's default {@code fs.nr_open}, the ceiling for RLIMIT_NOFILE. */
    public static final int MAX_OPEN_FILES = 1 << 20;

    /** The most CPUs a quota can name, in thousandths: 1024 CPUs. */
    public static final int MAX_CPU_MILLIS = 1024 * 1000;

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
        if (addressSpaceBytes != 0) {
            checkSize("addressSpaceBytes", addressSpaceBytes);
        }
        checkCount("processes", processes, MAX_PROCESSES);
        checkCount("openFiles", openFiles, MAX_OPEN_FILES);
        if (cpuMillis != 0) {
            checkCount("cpuMillis", cpuMillis, MAX_CPU_MILLIS);
        }
        explicit = Set.copyOf(explicit);
        if (!LimitsSection.KEYS.containsAll(explicit)) {
            throw new IllegalArgumentException("explicit names an unknown limit: " + explicit);
        }
    }

    /** Limits without an address-space limit or CPU quota, none of them written by a policy. */
    public Limits(
            Duration timeout, long memoryBytes, int processes, int openFiles, long fileSizeBytes, long tmpSizeBytes) {
        this(timeout, memoryBytes, processes, openFiles, fileSizeBytes, tmpSizeBytes, 0, 0, Set.of());
    }

    /** 12h, 16 GiB of memory, 4096 processes, 4096 open files, 16 GiB files, 1 GiB of /tmp; no RLIMIT_AS, no quota. */
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
        return new Limits(
                newTimeout,
                memoryBytes,
                processes,
                openFiles,
                fileSizeBytes,
                tmpSizeBytes,
                addressSpaceBytes,
                cpuMillis,
                explicit);
    }

    /** Whether a policy wrote {@code key} (a key of the {@code limits} section, like {@code memory}). */
    public boolean isExplicit(String key) {
        return explicit.contains(key);
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
