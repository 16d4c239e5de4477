package dev.agentjail.proxy.audit;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One change to the jail's file tree ({@code kind: file}, docs/audit-log.md "Inside the jail"): the operation, the path
 * (relative for a path in the project, {@code ~/...} in the jail's home, absolute elsewhere), for rename and link the
 * other path ({@code target}; for a symbolic link its text), the open flags that made an open a write, the pid, and how
 * many events the record stands for. A record that folds several paths of one directory has a {@code path} ending in
 * {@code /} and {@code paths} &gt; 1. {@code escaped}: as for {@link ExecDetails}. Never any of a file's content.
 */
public record FileDetails(
        String op,
        String path,
        String target,
        List<String> flags,
        int pid,
        long count,
        long paths,
        boolean racy,
        boolean escaped) {

    /** Every operation a record names. */
    public static final Set<String> OPERATIONS = Set.of(
            "write",
            "unlink",
            "rmdir",
            "rename",
            "mkdir",
            "link",
            "symlink",
            "truncate",
            "chmod",
            "chown",
            "utime",
            "mknod",
            "xattr",
            "bind");

    /** A record whose paths are UTF-8. */
    public FileDetails(
            String op, String path, String target, List<String> flags, int pid, long count, long paths, boolean racy) {
        this(op, path, target, flags, pid, count, paths, racy, false);
    }

    public FileDetails {
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(path, "path");
        if (!OPERATIONS.contains(op)) {
            throw new IllegalArgumentException("unknown file operation: " + op);
        }
        if (count < 1 || paths < 1 || paths > count || pid < 0) {
            throw new IllegalArgumentException("count >= paths >= 1 and pid >= 0");
        }
        flags = flags == null ? List.of() : List.copyOf(flags);
        path = AuditRecord.bound(path, AuditRecord.MAX_PATH_CHARS);
        target = AuditRecord.bound(target, AuditRecord.MAX_PATH_CHARS);
    }

    /** The same event standing for {@code count} of them. */
    public FileDetails withCount(long count) {
        return new FileDetails(op, path, target, flags, pid, count, 1, racy, escaped);
    }

    /**
     * A record of {@code count} events on {@code paths} distinct paths, named by {@code folded} (a directory or *): the
     * flags stay, as every event a fold stands for had them.
     */
    public FileDetails folded(String folded, long count, long paths) {
        return new FileDetails(op, folded, null, flags, pid, count, paths, racy, escaped);
    }
}
