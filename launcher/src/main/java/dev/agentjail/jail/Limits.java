package dev.agentjail.jail;

/**
 * Per-process resource caps of one jail: rlimits that agentjail-init applies before it execs the agent, and the sizes
 * of the jail's tmpfs mounts. Memory, the process count and CPU of the jail as a whole are the session's cgroup's
 * ({@link SessionLimits}).
 *
 * @param openFiles RLIMIT_NOFILE
 * @param processes RLIMIT_NPROC (per user namespace on Linux 5.14 and later; the kernel ignores it for a jail
 *     started by root, see docs/jail.md)
 * @param addressSpaceBytes RLIMIT_AS: {@link #UNLIMITED} unless the policy sets {@code limits.address_space} (V8
 *     reserves 8 to 10 GiB of address space per WebAssembly memory, so any default would break Node)
 * @param fileSizeBytes RLIMIT_FSIZE
 * @param tmpBytes size of the tmpfs on /tmp
 * @param homeBytes size of the tmpfs home
 * @param shmBytes size of the tmpfs on /dev/shm
 */
public record Limits(
        long openFiles,
        long processes,
        long addressSpaceBytes,
        long fileSizeBytes,
        long tmpBytes,
        long homeBytes,
        long shmBytes) {
    /** An rlimit value meaning "no limit" (RLIM_INFINITY); not allowed for tmpfs sizes. */
    public static final long UNLIMITED = -1;

    private static final long GIB = 1L << 30;

    /**
     * Defaults that stop a runaway writer, a full /tmp and (for a launcher that is not root) a fork bomb, without
     * getting in the way of node, the JVM or a compiler. No RLIMIT_AS: V8 and the JVM reserve far more address space
     * than they use, and address space is no measure of memory.
     */
    public static final Limits DEFAULTS = new Limits(8192, 4096, UNLIMITED, 16 * GIB, 2 * GIB, 1 * GIB, 256L << 20);

    public Limits {
        rlimit(openFiles, "openFiles");
        rlimit(processes, "processes");
        rlimit(addressSpaceBytes, "addressSpaceBytes");
        rlimit(fileSizeBytes, "fileSizeBytes");
        size(tmpBytes, "tmpBytes");
        size(homeBytes, "homeBytes");
        size(shmBytes, "shmBytes");
    }

    /** The value as agentjail-init reads it: a decimal number or {@code unlimited}. */
    static String initArgument(long value) {
        return value == UNLIMITED ? "unlimited" : Long.toString(value);
    }

    private static void rlimit(long value, String name) {
        if (value < 0 && value != UNLIMITED) {
            throw new IllegalArgumentException(name + " must be >= 0 or UNLIMITED: " + value);
        }
    }

    private static void size(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be a positive size in bytes: " + value);
        }
    }
}
