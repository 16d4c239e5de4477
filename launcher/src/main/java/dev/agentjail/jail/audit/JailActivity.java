package dev.agentjail.jail.audit;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.ExecDetails;
import dev.agentjail.proxy.audit.FileDetails;
import dev.agentjail.proxy.audit.GapDetails;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.redact.Findings;
import dev.agentjail.proxy.redact.Redactor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns the supervisor's frames into {@code exec}, {@code file} and {@code audit-gap} records, coalesced by the rule of
 * docs/audit-log.md "Inside the jail": windows of one second ({@link #tick} ends one); the first event of a key is
 * written at once, the rest of the key's events in the window as one record with their count when it ends; past 32
 * paths of one process, operation and directory the window's further paths there fold into one directory record;
 * past 1,000 file records or 1,000 exec records in a window, everything else folds per operation or program (an exec
 * fold says how many distinct command lines it stands for).
 *
 * <p>Not thread-safe: one thread (the supervisor channel's event loop) calls every method.
 */
final class JailActivity {
    /** Where records go; it may throw (the sink's own failure), which the caller reports. */
    @FunctionalInterface
    interface Writer {
        void write(AuditRecord record);
    }

    static final int PATHS_PER_DIRECTORY = 32;
    static final int FILE_RECORDS_PER_WINDOW = 1_000;
    static final int EXEC_RECORDS_PER_WINDOW = 1_000;

    /** The most distinct keys one window tells apart; past it every event counts as a new path. */
    static final int KEYS_PER_WINDOW = 65_536;

    /** The most distinct changed paths a session tells apart for its {@code files_changed}. */
    static final int DISTINCT_FILES = 100_000;

    private static final String ANYWHERE = "*";

    /** The reason of a call refused because it named memory the supervisor could not read. */
    static final String UNREADABLE = "audit-unreadable-memory";

    /** The most refused calls a window writes one by one; the rest are one audit-gap record's count. */
    static final int REFUSED_PER_WINDOW = 100;

    private final String session;
    private final PathView paths;
    private final Redactor redactor;
    private final Writer out;

    private final Map<String, Pending> keys = new LinkedHashMap<>();
    private final Map<String, Fold> folds = new LinkedHashMap<>();
    private final Map<String, Integer> pathsInDirectory = new HashMap<>();
    private int fileRecords;
    private int execRecords;
    private int refusedRecords;
    private long refusedMore;

    private long programs;
    private long fileEvents;
    private final Set<String> changed = new HashSet<>();
    private long unrecorded;
    private long redacted;

    JailActivity(String session, PathView paths, Redactor redactor, Writer out) {
        this.session = session;
        this.paths = paths;
        this.redactor = redactor;
        this.out = out;
    }

    /** One frame: an exec or file event, or a count of events let go on without a frame. */
    void frame(AuditFrame frame) {
        switch (frame.type()) {
            case AuditFrame.EXEC -> exec(frame);
            case AuditFrame.FILE -> file(frame);
            case AuditFrame.UNRECORDED -> {
                long count = Math.max(0, frame.number(AuditFrame.COUNT, 0));
                if (count > 0) {
                    unrecorded += count;
                    gap("audit-events-dropped", count, false, null, time(frame));
                }
            }
            default -> {
                // HELLO is the link's; nothing else parses.
            }
        }
    }

    /** Ends the window: every count still owed is written. */
    void tick() {
        try {
            for (Pending p : keys.values()) {
                if (p != null && p.more > 0) {
                    out.write(p.withCount(p.more));
                }
            }
            for (Fold f : folds.values()) {
                out.write(f.record());
            }
            if (refusedMore > 0) {
                gap(UNREADABLE, refusedMore, false, null, Instant.now());
            }
        } finally {
            // Whatever failed, the next window starts empty: a count is written once at most.
            clearWindow();
        }
    }

    private void clearWindow() {
        keys.clear();
        folds.clear();
        pathsInDirectory.clear();
        fileRecords = 0;
        execRecords = 0;
        refusedRecords = 0;
        refusedMore = 0;
    }

    /**
     * A call the supervisor answered EFAULT without letting it run: it named memory /proc/PID/mem could not read, which
     * the kernel might have read (docs/jail.md "Exec and file audit"). A deny record each, bounded per window.
     */
    private void refused(AuditRecord.Builder record) {
        if (refusedRecords >= REFUSED_PER_WINDOW) {
            refusedMore++;
            return;
        }
        refusedRecords++;
        out.write(record.decision(AuditRecord.DENY).reason(UNREADABLE).build());
    }

    /** An {@code audit-gap} record. */
    void gap(String reason, long missed, boolean stopped, String error, Instant ts) {
        out.write(AuditRecord.builder()
                .kind(AuditRecord.KIND_AUDIT_GAP)
                .ts(ts)
                .session(session)
                .reason(reason)
                .error(error)
                .gap(new GapDetails(missed, stopped))
                .build());
    }

    /** The session's exec events. */
    long programs() {
        return programs;
    }

    /** The session's distinct changed paths (a lower bound once {@link #DISTINCT_FILES} were told apart). */
    long filesChanged() {
        return changed.size();
    }

    long fileEvents() {
        return fileEvents;
    }

    /** Secrets the catalog found in the session's paths and arguments (each event's own, coalesced or not). */
    long redacted() {
        return redacted;
    }

    /** Events the supervisor let go on without a frame. */
    long unrecorded() {
        return unrecorded;
    }

    private void exec(AuditFrame frame) {
        boolean missing = frame.has(AuditFrame.MISSING);
        boolean refused = frame.has(AuditFrame.REFUSED);
        if (!missing && !refused) {
            programs++;
        }
        Findings findings = new Findings();
        String path = redactor.redactPath(
                PathView.absolute(frame.text(AuditFrame.PATH), frame.text(AuditFrame.BASE)), findings);
        List<String> argv = new ArrayList<>();
        int chars = 0;
        boolean cut = frame.has(AuditFrame.ARGV_CUT);
        for (String arg : frame.texts(AuditFrame.ARG)) {
            if (argv.size() == ExecDetails.MAX_ARGS || chars >= ExecDetails.MAX_ARGV_CHARS) {
                cut = true;
                break;
            }
            String redacted = redactor.redactArgument(arg, findings);
            if (chars + redacted.length() > ExecDetails.MAX_ARGV_CHARS) {
                redacted = redacted.substring(0, ExecDetails.MAX_ARGV_CHARS - chars);
                cut = true;
            }
            chars += redacted.length();
            argv.add(redacted);
        }
        String cwd = frame.text(AuditFrame.CWD);
        cwd = cwd == null ? null : redactor.redactPath(cwd, findings);
        int pid = (int) Math.max(0, frame.number(AuditFrame.PID, 0));
        int ppid = (int) Math.max(0, frame.number(AuditFrame.PPID, 0));
        ExecDetails details = new ExecDetails(
                path,
                argv,
                cut,
                cwd,
                pid,
                ppid,
                frame.number(AuditFrame.UID, -1),
                1,
                frame.has(AuditFrame.RACY),
                1,
                missing,
                frame.escaped());
        List<RedactionCount> redactions = findings.list().stream()
                .map(f -> new RedactionCount(f.kind(), f.location(), f.count()))
                .toList();
        redactions.forEach(r -> redacted += r.count());
        Instant ts = time(frame);
        if (refused) {
            refused(base(ts).kind(AuditRecord.KIND_EXEC).exec(details).redactions(redactions));
            return;
        }
        // Everything a record says is in its key: a start folded into another's count must not lose a mark (a miss
        // then a real run of ./build, a racy or escaped repeat).
        String key = "e\0" + ppid + '\0' + path + '\0' + String.join("\0", argv) + '\0' + cwd + '\0'
                + marks(missing, details.racy(), details.escaped());
        Pending seen = keys.get(key);
        if (seen != null) {
            seen.more++;
            seen.last = ts;
            return;
        }
        if (execRecords >= EXEC_RECORDS_PER_WINDOW) {
            String foldKey = "e\0" + path + '\0' + marks(missing, details.racy(), details.escaped());
            Fold fold = folds.computeIfAbsent(foldKey, k -> Fold.exec(this, details, redactions));
            fold.add(ts, keys.size() < KEYS_PER_WINDOW ? remember(key, null) : true);
            return;
        }
        execRecords++;
        Pending pending = new Pending(this, details, null, redactions, ts);
        remember(key, pending);
        out.write(pending.withCount(1));
    }

    private void file(AuditFrame frame) {
        fileEvents++;
        String op = frame.text(AuditFrame.OP);
        if (op == null || !FileDetails.OPERATIONS.contains(op)) {
            return;
        }
        // A file may be named after a secret (a key's file name, a token in a cache path): paths are redacted too.
        Findings findings = new Findings();
        String path =
                redactor.redactPath(paths.view(frame.text(AuditFrame.PATH), frame.text(AuditFrame.BASE)), findings);
        String target = null;
        if (frame.has(AuditFrame.TARGET)) {
            target = redactor.redactPath(
                    op.equals("symlink")
                            ? frame.text(AuditFrame.TARGET)
                            : paths.view(frame.text(AuditFrame.TARGET), frame.text(AuditFrame.BASE2)),
                    findings);
        }
        List<RedactionCount> redactions = findings.list().stream()
                .map(f -> new RedactionCount(f.kind(), f.location(), f.count()))
                .toList();
        redactions.forEach(r -> redacted += r.count());
        int pid = (int) Math.max(0, frame.number(AuditFrame.PID, 0));
        FileDetails details = new FileDetails(
                op, path, target, openFlags(frame), pid, 1, 1, frame.has(AuditFrame.RACY), frame.escaped());
        Instant ts = time(frame);
        if (frame.has(AuditFrame.REFUSED)) {
            refused(base(ts).kind(AuditRecord.KIND_FILE).file(details).redactions(redactions));
            return;
        }
        // A Unix socket bound to an abstract name (op bind, "@name") makes no file.
        if (changed.size() < DISTINCT_FILES && !op.equals("bind")) {
            changed.add(path);
            if (op.equals("rename") && target != null && changed.size() < DISTINCT_FILES) {
                changed.add(target);
            }
        }
        // The target too: a second rename or symlink to another target is another event, not a repeat.
        String key = "f\0" + pid + '\0' + op + '\0' + path + '\0' + (target == null ? "" : "\0" + target) + '\0'
                + marks(false, details.racy(), details.escaped());
        Pending seen = keys.get(key);
        if (seen != null) {
            seen.more++;
            seen.last = ts;
            return;
        }
        if (seen == null && keys.containsKey(key)) {
            // Folded before in this window: the fold counts it, no new path.
            foldFor(details).add(ts, false);
            return;
        }
        boolean fresh = keys.size() < KEYS_PER_WINDOW ? remember(key, null) : true;
        if (fileRecords >= FILE_RECORDS_PER_WINDOW) {
            String foldKey = "f\0" + op;
            folds.computeIfAbsent(foldKey, k -> Fold.file(this, details, ANYWHERE))
                    .add(ts, fresh);
            return;
        }
        String directoryKey = pid + "\0" + op + '\0' + PathView.directoryOf(path);
        int inDirectory = pathsInDirectory.merge(directoryKey, 1, Integer::sum);
        if (inDirectory > PATHS_PER_DIRECTORY) {
            folds.computeIfAbsent("d\0" + directoryKey, k -> Fold.file(this, details, PathView.directoryOf(path)))
                    .add(ts, fresh);
            return;
        }
        fileRecords++;
        Pending pending = new Pending(this, null, details, redactions, ts);
        keys.put(key, pending);
        out.write(pending.withCount(1));
    }

    /** The fold a folded key's later events go to: its directory's, or the window's for its operation. */
    private Fold foldFor(FileDetails details) {
        String directoryKey = details.pid() + "\0" + details.op() + '\0' + PathView.directoryOf(details.path());
        Fold fold = folds.get("d\0" + directoryKey);
        return fold != null
                ? fold
                : folds.computeIfAbsent("f\0" + details.op(), k -> Fold.file(this, details, ANYWHERE));
    }

    private static String marks(boolean missing, boolean racy, boolean escaped) {
        return (missing ? "m" : "") + (racy ? "r" : "") + (escaped ? "e" : "");
    }

    /** Notes a key in this window; true when it was not there. */
    private boolean remember(String key, Pending pending) {
        // A folded key is held with no Pending: put's answer cannot tell it from a key not seen.
        boolean fresh = !keys.containsKey(key);
        keys.put(key, pending);
        return fresh;
    }

    private static List<String> openFlags(AuditFrame frame) {
        long flags = frame.number(AuditFrame.FLAGS, -1);
        if (flags < 0) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        if ((flags & 0100) != 0) {
            names.add("create");
        }
        if ((flags & 01000) != 0) {
            names.add("truncate");
        }
        if ((flags & 02000) != 0) {
            names.add("append");
        }
        if ((flags & 020000000) != 0) {
            names.add("tmpfile");
        }
        return names;
    }

    private static Instant time(AuditFrame frame) {
        long ms = frame.number(AuditFrame.TIME, -1);
        return ms < 0 ? Instant.now() : Instant.ofEpochMilli(ms);
    }

    private AuditRecord.Builder base(Instant ts) {
        return AuditRecord.builder().ts(ts).session(session);
    }

    /** The first event of a key, written at once; {@code more} counts its later events in the window. */
    private static final class Pending {
        private final JailActivity owner;
        private final ExecDetails exec;
        private final FileDetails file;
        private final List<RedactionCount> redactions;
        private Instant last;
        private long more;

        Pending(JailActivity owner, ExecDetails exec, FileDetails file, List<RedactionCount> redactions, Instant ts) {
            this.owner = owner;
            this.exec = exec;
            this.file = file;
            this.redactions = redactions;
            this.last = ts;
        }

        AuditRecord withCount(long count) {
            AuditRecord.Builder b = owner.base(last).redactions(redactions);
            if (exec != null) {
                return b.kind(AuditRecord.KIND_EXEC)
                        .exec(exec.withCount(count, 1))
                        .build();
            }
            return b.kind(AuditRecord.KIND_FILE).file(file.withCount(count)).build();
        }
    }

    /** Events folded into one record: a directory's paths, an operation's anywhere, or a program's starts. */
    private static final class Fold {
        private final JailActivity owner;
        private final ExecDetails exec;
        private final List<RedactionCount> redactions;
        private final FileDetails file;
        private final String path;
        private Instant last;
        private long count;
        private long paths;

        private Fold(
                JailActivity owner, ExecDetails exec, List<RedactionCount> redactions, FileDetails file, String path) {
            this.owner = owner;
            this.exec = exec;
            this.redactions = redactions;
            this.file = file;
            this.path = path;
        }

        static Fold exec(JailActivity owner, ExecDetails first, List<RedactionCount> redactions) {
            return new Fold(owner, first, redactions, null, first.path());
        }

        static Fold file(JailActivity owner, FileDetails first, String path) {
            return new Fold(owner, null, List.of(), first, path);
        }

        void add(Instant ts, boolean newPath) {
            last = ts;
            count++;
            if (newPath || paths == 0) {
                paths++;
            }
        }

        AuditRecord record() {
            AuditRecord.Builder b = owner.base(last).redactions(redactions);
            if (exec != null) {
                return b.kind(AuditRecord.KIND_EXEC)
                        .exec(exec.withCount(count, Math.max(1, Math.min(paths, count))))
                        .build();
            }
            return b.kind(AuditRecord.KIND_FILE)
                    .file(file.folded(path, count, Math.min(paths, count)))
                    .build();
        }
    }
}
