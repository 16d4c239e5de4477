package dev.agentjail.proxy.audit;

import java.util.List;
import java.util.Objects;

/**
 * One program the jail started ({@code kind: exec}, docs/audit-log.md "Inside the jail"): the path execve was given,
 * resolved against the caller's directory; the argument vector after redaction, bounded; the caller's working
 * directory; its pid and parent pid as the jail sees them; the kernel uid it ran as; and how many identical starts this
 * record stands for ({@code count}, see the coalescing rule). {@code racy} says the caller's memory changed while it was
 * read, so the path or arguments may not be what the kernel executed. {@code commands} is how many distinct command
 * lines a folded record stands for (its {@code argv} is the first one's); {@code missing} that the program's file was
 * not there when the supervisor looked (a {@code PATH} search's miss, which runs nothing); {@code escaped} that a string
 * of the record was not UTF-8 and all of them are written byte by byte ({@code \\} a backslash, {@code \xNN} a byte).
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
        boolean racy,
        long commands,
        boolean missing,
        boolean escaped) {

    /** The most argument characters a record keeps, all arguments together; the rest is cut and flagged. */
    public static final int MAX_ARGV_CHARS = 4096;

    /** The most arguments a record keeps. */
    public static final int MAX_ARGS = 256;

    /** One start of one command line, found and UTF-8. */
    public ExecDetails(
            String path,
            List<String> argv,
            boolean argvTruncated,
            String cwd,
            int pid,
            int ppid,
            long uid,
            long count,
            boolean racy) {
        this(path, argv, argvTruncated, cwd, pid, ppid, uid, count, racy, 1, false, false);
    }

    public ExecDetails {
        Objects.requireNonNull(path, "path");
        argv = List.copyOf(argv);
        if (count < 1 || pid < 0 || ppid < 0 || commands < 1 || commands > count) {
            throw new IllegalArgumentException("count >= commands >= 1 and pids are not negative");
        }
        path = AuditRecord.bound(path, AuditRecord.MAX_PATH_CHARS);
        cwd = AuditRecord.bound(cwd, AuditRecord.MAX_PATH_CHARS);
    }

    /** The same start standing for {@code count} starts of {@code commands} distinct command lines. */
    public ExecDetails withCount(long count, long commands) {
        return new ExecDetails(path, argv, argvTruncated, cwd, pid, ppid, uid, count, racy, commands, missing, escaped);
    }
}
