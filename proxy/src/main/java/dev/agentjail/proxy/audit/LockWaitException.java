package dev.agentjail.proxy.audit;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/** Another writer held the audit log's lock for longer than this writer would wait; nothing was written. */
public final class LockWaitException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Path lockFile;
    private final String holder;

    LockWaitException(Path lockFile, Duration waited, String holder) {
        super("the lock " + lockFile + " has been held by " + holder + " for " + seconds(waited));
        this.lockFile = lockFile;
        this.holder = holder;
    }

    /** The lock file next to the log. */
    public Path lockFile() {
        return lockFile;
    }

    /** Who held it, as far as {@code /proc/locks} tells: {@code process 1234 (java)} or {@code another writer}. */
    public String holder() {
        return holder;
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
