package dev.agentjail.proxy.audit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * Names the process holding a POSIX lock, from {@code /proc/locks}, for the message of a writer that waited for it
 * too long. Only a diagnosis: it may name nobody (another mount namespace, a kernel without the file, the lock let go
 * meanwhile) and then says so.
 */
final class LockHolders {
    private static final Path PROC_LOCKS = Path.of("/proc/locks");

    private LockHolders() {}

    /** {@code process 1234 (java)}, or {@code another writer} when the holder of byte {@code at} cannot be told. */
    static String describe(Path file, long at) {
        try {
            long ino = ((Number) Files.getAttribute(file, "unix:ino", LinkOption.NOFOLLOW_LINKS)).longValue();
            long dev = ((Number) Files.getAttribute(file, "unix:dev", LinkOption.NOFOLLOW_LINKS)).longValue();
            OptionalLong pid = holder(Files.readAllLines(PROC_LOCKS, StandardCharsets.US_ASCII), dev, ino, at);
            if (pid.isPresent()) {
                return "process " + pid.getAsLong() + command(pid.getAsLong());
            }
        } catch (IOException | RuntimeException e) {
            // Only a diagnosis.
        }
        return "another writer";
    }

    /**
     * The pid of the process that holds a write lock covering byte {@code at} of the file {@code dev}/{@code ino} in
     * {@code lines} of {@code /proc/locks}: {@code 1: POSIX  ADVISORY  WRITE 3568 fd:00:2531452 0 0}, major and
     * minor in hex; a line of a process blocked waiting ({@code 1: -> POSIX ...}) is skipped.
     */
    static OptionalLong holder(List<String> lines, long dev, long ino, long at) {
        String want = Long.toHexString(major(dev)) + ":" + Long.toHexString(minor(dev)) + ":" + ino;
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 8 || !f[1].equals("POSIX") || !f[3].equals("WRITE")) {
                continue;
            }
            String[] id = f[5].split(":");
            if (id.length != 3) {
                continue;
            }
            String seen = Long.toHexString(Long.parseLong(id[0], 16)) + ":"
                    + Long.toHexString(Long.parseLong(id[1], 16)) + ":" + id[2];
            if (!seen.equals(want)) {
                continue;
            }
            long start = Long.parseLong(f[6]);
            boolean toEnd = f[7].equals("EOF");
            if (at >= start && (toEnd || at <= Long.parseLong(f[7]))) {
                return OptionalLong.of(Long.parseLong(f[4]));
            }
        }
        return OptionalLong.empty();
    }

    /** glibc's encoding of a dev_t, as stat(2) gives it. */
    static long major(long dev) {
        return ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
    }

    static long minor(long dev) {
        return (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
    }

    private static String command(long pid) {
        try {
            String comm = Files.readString(Path.of("/proc", Long.toString(pid), "comm"), StandardCharsets.UTF_8)
                    .strip();
            return comm.isEmpty() ? "" : " (" + comm.replaceAll("[^\\x20-\\x7e]", "?") + ")";
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
