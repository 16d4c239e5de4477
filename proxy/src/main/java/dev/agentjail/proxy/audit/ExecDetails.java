package dev.agentjail.proxy.audit;

import java.util.List;
import java.util.Objects;

/**
 * One program the jail started ({@code kind: exec}, docs/audit-log.md "Inside the jail"): the path execve was given,
 * resolved against the caller's directory; the argument vector after redaction, bounded; the caller's working
 * directory; its pid and parent pid as the jail sees them; the kernel uid it ran as; and how many identical starts this
 * record stands for ({@code count}, see the coalescing rule). {@code racy} says the caller's memory changed while it was
 * read, so the path or arguments may not be what the kernel executed.
 */
public record ExecDetails(
        String path,
        List<String> argv,
        boolean argvTruncated,
        String cwd,
        int pid,
        int ppid,
        long uid,
        long count,
        boolean racy) {

    /** The most argument characters a record keeps, all arguments together; the rest is cut and flagged. */
    public static final int MAX_ARGV_CHARS = 4096;

    /** The most arguments a record keeps. */
    public static final int MAX_ARGS = 256;

    public ExecDetails {
        Objects.requireNonNull(path, "path");
        argv = List.copyOf(argv);
        if (count < 1 || pid < 0 || ppid < 0) {
            throw new IllegalArgumentException("count is at least 1 and pids are not negative");
        }
        path = AuditRecord.bound(path, AuditRecord.MAX_PATH_CHARS);
        cwd = AuditRecord.bound(cwd, AuditRecord.MAX_PATH_CHARS);
    }
}
