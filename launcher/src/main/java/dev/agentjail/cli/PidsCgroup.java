package dev.agentjail.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A pids cgroup that caps the number of processes of one jail; used when the launcher runs as root,
 * where the kernel does not apply RLIMIT_NPROC. Supports cgroup v2 (pids controller enabled for
 * children of the root) and the v1 pids hierarchy.
 */
final class PidsCgroup {
    private static final Path V2_ROOT = Path.of("/sys/fs/cgroup");
    private static final Path V1_PIDS = Path.of("/sys/fs/cgroup/pids");

    private final Path dir;

    private PidsCgroup(Path dir) {
        this.dir = dir;
    }

    /** Creates the group with {@code pids.max}; null when no writable pids controller exists. */
    static PidsCgroup create(String session, int maxPids) {
        Path parent = pidsParent();
        if (parent == null) {
            return null;
        }
        Path dir = parent.resolve("agentjail-" + session);
        try {
            Files.createDirectory(dir);
            Files.writeString(dir.resolve("pids.max"), Integer.toString(maxPids));
            return new PidsCgroup(dir);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // Nothing was created, or it cannot be removed; either way there is no limit to offer.
            }
            return null;
        }
    }

    private static Path pidsParent() {
        try {
            Path controllers = V2_ROOT.resolve("cgroup.subtree_control");
            if (Files.isRegularFile(controllers)
                    && Files.readString(controllers).contains("pids")) {
                return V2_ROOT;
            }
        } catch (IOException ignored) {
            // Fall through to v1.
        }
        return Files.isRegularFile(V1_PIDS.resolve("cgroup.procs")) ? V1_PIDS : null;
    }

    Path procsFile() {
        return dir.resolve("cgroup.procs");
    }

    /**
     * Removes the group once the jail has exited. The kernel refuses while killed processes are still
     * being reaped, so this waits for {@code cgroup.procs} to empty, for a bounded time.
     */
    void remove() {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            try {
                Files.deleteIfExists(dir);
                return;
            } catch (IOException busy) {
                if (System.nanoTime() > deadline) {
                    return;
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
