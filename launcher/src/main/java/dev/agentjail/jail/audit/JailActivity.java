package dev.agentjail.jail.audit;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.ExecDetails;
import dev.agentjail.proxy.audit.FileDetails;
import dev.agentjail.proxy.audit.GapDetails;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.redact.Findings;
import dev.agentjail.proxy.redact.Redactor;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
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
 * past 1,000 file records of an operation or 1,000 exec records (and as many again for misses) in a window, everything
 * else folds per operation or program (an exec fold says how many distinct command lines it stands for).
 *
 * <p>A repeat is counted on its frame's bytes ({@link #frame(ByteBuf)}): a frame whose bytes but its time are those of
 * one seen before in the window is counted where that one was, without being parsed, decoded or redacted again. In a
 * loop over the same few files, that is nearly every frame.
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

    /**
     * The most a window holds of its keys, repeats and folds, in bytes (estimated: two bytes a character, and a
     * frame's own bytes): paths of 4,096 bytes and command lines of 16 KiB from a loop of distinct names would
     * otherwise fill the launcher's heap within a window. Past it, a key is not held (its events count as new paths)
     * and a program gets no fold of its own.
     */
    static final long HELD_BYTES_PER_WINDOW = 16L << 20;

    /** The most programs a window folds one by one (past its exec records); the rest fold into one per marks. */
    static final int EXEC_FOLDS_PER_WINDOW = 1_000;

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

    /** Every key seen in the window, and where its events are counted: its first record or the fold it went to. */
    private final Map<String, Tally> keys = new LinkedHashMap<>();

    private final Map<String, Fold> folds = new LinkedHashMap<>();
    private final Map<String, Integer> pathsInDirectory = new HashMap<>();
    private final Map<AuditFrame.Key, Repeat> repeats = new HashMap<>();
    /** Where the last frame's event was counted (set by {@link #counted}), for {@link #frame(ByteBuf)}. */
    private Repeat last;

    /** Where the newest frame's event was counted, by either path, for a retraction; null when it was not. */
    private Repeat previous;

    private long retracted;

    /** File records of the window, per operation. */
    private final Map<String, Integer> fileRecords = new HashMap<>();
    /** Exec records and program folds of the window: [0] real starts, [1] misses. */
    private final int[] execRecords = new int[2];

    private final int[] execFolds = new int[2];
    private long heldBytes;
    private int refusedRecords;
    private long refusedMore;

    private long programs;
    private long fileEvents;
    /** The changed paths told apart, by a 64-bit share of their SHA-256: a path of 4,096 characters costs no more. */
    private final Set<Long> changed = new HashSet<>();

    private final MessageDigest sha256 = sha256();

    /** Texts the catalog found nothing in ({@link #redact}). */
    private final Set<String> clean = new HashSet<>();

    static final int CLEAN_TEXTS = 4_096;
    static final int CLEAN_TEXT_CHARS = 256;
    private long unrecorded;
    private long redacted;

    JailActivity(String session, PathView paths, Redactor redactor, Writer out) {
        this(session, paths, redactor, out, SESSION_RECORD_BYTES);
    }

    JailActivity(String session, PathView paths, Redactor redactor, Writer out, long recordBytes) {
        this.session = session;
        this.paths = paths;
        this.redactor = redactor;
        this.recordBytes = recordBytes;
        this.out = record -> {
            written += estimatedBytes(record);
            out.write(record);
            if (!overBudget && written > this.recordBytes) {
                overBudget = true;
                out.write(AuditRecord.builder()
                        .kind(AuditRecord.KIND_AUDIT_GAP)
                        .ts(Instant.now())
                        .session(session)
                        .reason(BUDGET_REACHED)
                        .error("the session's exec and file records reached " + (this.recordBytes >> 20)
                                + " MiB: from here on every window counts the programs run and the files changed"
                                + " per operation only (path *)")
                        .gap(new GapDetails(0, false))
                        .build());
            }
        };
    }

    /**
     * The most a session's exec and file records take of the log, estimated, before every further event folds into
     * its window's record per operation (or per marks, for programs), with path {@code *}: an agent that starts
     * programs with long command lines in a loop would otherwise write megabytes a second into the host's log for as
     * long as the session lasts. Past it, each window still writes a few records, with every event counted.
     */
    static final long SESSION_RECORD_BYTES = 512L << 20;

    /** The reason of the {@code audit-gap} record that says the session's records reached their bound. */
    static final String BUDGET_REACHED = "audit-budget-reached";

    private final long recordBytes;
    private long written;
    private boolean overBudget;

    /** About what a record takes in the log: its texts and a fixed part for the rest. */
    private static long estimatedBytes(AuditRecord record) {
        long bytes = 320;
        if (record.exec() != null) {
            ExecDetails e = record.exec();
            bytes += e.path().length()
                    + (e.cwd() == null ? 0 : e.cwd().length())
                    + 3L * e.argv().size();
            for (String a : e.argv()) {
                bytes += a.length();
            }
        }
        if (record.file() != null) {
            FileDetails f = record.file();
            bytes += f.path().length() + (f.target() == null ? 0 : f.target().length());
        }
        return bytes;
    }

    /** Bytes of exec and file records the session has written, estimated. */
    long writtenBytes() {
        return written;
    }

    /**
     * One frame as the supervisor sent it: a repeat of a frame seen in this window (the same bytes but for the time) is
     * counted where that one was; any other is parsed and taken as {@link #frame(AuditFrame)} takes it. Both ways make
     * the same records and counts (JailActivityTest holds them to that).
     */
    void frame(ByteBuf body) {
        // One copy out of the buffer, for both: the identity and, when it is no repeat, the parse.
        byte[] bytes = new byte[body.readableBytes()];
        body.readBytes(bytes);
        AuditFrame.Identity identity = AuditFrame.identity(bytes);
        if (identity != null) {
            Repeat repeat = repeats.get(identity.bytes());
            if (repeat != null) {
                repeat.count(this, time(identity.time()));
                previous = repeat;
                return;
            }
        }
        AuditFrame frame = AuditFrame.parse(bytes);
        last = null;
        frame(frame);
        previous = frame.type() == AuditFrame.RETRACT ? null : last;
        if (identity != null
                && last != null
                && repeats.size() < KEYS_PER_WINDOW
                && afford(identity.bytes().length())) {
            repeats.put(identity.bytes(), last);
        }
    }

    /** One frame: an exec or file event, or a count of events let go on without a frame. */
    void frame(AuditFrame frame) {
        switch (frame.type()) {
            case AuditFrame.EXEC -> exec(frame);
            case AuditFrame.FILE -> file(frame);
            case AuditFrame.RETRACT -> retract();
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

    /**
     * The newest frame stands for nothing: its caller was interrupted (a signal) before the call ran, and the call,
     * restarted, comes as a frame of its own. Its count is taken back where it was counted; a count already written (a
     * key's first record) is taken back from the key's next event in the window instead, which is nearly always that
     * restart. A frame that was not counted (a refused call, one past the window's memory) is only tallied.
     */
    void retract() {
        retracted++;
        if (previous != null) {
            previous.uncount(this);
            previous = null;
        }
    }

    /** Frames taken back because their callers were interrupted before the call ran. */
    long retracted() {
        return retracted;
    }

    /** Ends the window: every count still owed is written. */
    void tick() {
        try {
            for (Tally t : keys.values()) {
                if (t instanceof Pending p && p.more > 0) {
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
        repeats.clear();
        fileRecords.clear();
        Arrays.fill(execRecords, 0);
        Arrays.fill(execFolds, 0);
        heldBytes = 0;
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

    /** What the window holds of its keys, repeats and folds, in estimated bytes (at most HELD_BYTES_PER_WINDOW). */
    long heldBytes() {
        return heldBytes;
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
        Found findings = new Found();
        String rawPath = PathView.absolute(frame.text(AuditFrame.PATH), frame.text(AuditFrame.BASE));
        String path = redact(rawPath, findings, true);
        List<String> rawArgv = frame.texts(AuditFrame.ARG);
        List<String> argv = new ArrayList<>();
        int chars = 0;
        boolean cut = frame.has(AuditFrame.ARGV_CUT);
        String previous = null;
        String program = null;
        for (String arg : rawArgv) {
            if (argv.size() == ExecDetails.MAX_ARGS || chars >= ExecDetails.MAX_ARGV_CHARS) {
                cut = true;
                break;
            }
            String redacted = redact(arg, findings, false);
            if (previous != null && redacted == arg) {
                // A credential the argument before names ("Bearer" then the token, "--password" then the password)
                // or the program's short option ("curl -u bob:pw", "mysql -pPW"): a text clean on its own (and so
                // perhaps in the cache of clean texts) is not clean after those.
                Findings own = new Findings();
                redacted = redactor.redactArgumentAfter(program, previous, arg, own);
                findings.add(own);
            }
            previous = arg;
            program = Redactor.programAfter(program, arg);
            if (chars + redacted.length() > ExecDetails.MAX_ARGV_CHARS) {
                redacted = redacted.substring(0, ExecDetails.MAX_ARGV_CHARS - chars);
                cut = true;
            }
            chars += redacted.length();
            argv.add(redacted);
        }
        String rawCwd = frame.text(AuditFrame.CWD);
        String cwd = rawCwd == null ? null : redact(rawCwd, findings, true);
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
        List<RedactionCount> redactions = findings.list();
        long found = count(redactions);
        redacted += found;
        Instant ts = time(frame);
        if (refused) {
            refused(base(ts).kind(AuditRecord.KIND_EXEC).exec(details).redactions(redactions));
            return;
        }
        // Everything a record says is in its key: a start folded into another's count must not lose a mark (a miss
        // then a real run of ./build, a racy or escaped repeat, arguments cut). The key is of what the caller gave, as
        // it was before redaction and cutting: two tokens that redact alike, or two command lines alike in their
        // first 4,096 characters, are two keys, and a fold counts them as two command lines.
        String key = "e\0" + ppid + '\0' + rawPath + '\0' + rawArgv.size() + '\0' + String.join("\0", rawArgv) + '\0'
                + rawCwd + '\0' + marks(missing, details.racy(), details.escaped()) + (cut ? "c" : "");
        Tally seen = keys.get(key);
        if (seen != null) {
            seen.repeat(ts);
            counted(Repeat.exec(seen, found, !missing));
            return;
        }
        // Misses have budgets of their own: a loop of failing execs must not push a real start into a fold.
        int budget = missing ? 1 : 0;
        if (execRecords[budget] >= EXEC_RECORDS_PER_WINDOW || overBudget) {
            String marks = marks(missing, details.racy(), details.escaped());
            String foldKey = "e\0" + rawPath + '\0' + marks;
            Fold fold = folds.get(foldKey);
            if (fold == null
                    && !overBudget
                    && execFolds[budget] < EXEC_FOLDS_PER_WINDOW
                    && afford(2L * (foldKey.length() + argvChars(details)))) {
                execFolds[budget]++;
                fold = Fold.exec(this, details, redactions);
                folds.put(foldKey, fold);
            } else if (fold == null) {
                // Past its bounds a window folds every further program into one record per marks: path "*", no argv.
                fold = folds.computeIfAbsent(
                        "e\0" + ANYWHERE + '\0' + marks, k -> Fold.exec(this, anyProgram(details), List.of()));
            }
            fold.add(ts, true);
            counted(hold(key, fold) ? Repeat.exec(fold, found, !missing) : null);
            return;
        }
        execRecords[budget]++;
        Pending pending = new Pending(this, details, null, redactions, ts);
        counted(hold(key, pending) ? Repeat.exec(pending, found, !missing) : null);
        out.write(pending.withCount(1));
    }

    private void file(AuditFrame frame) {
        fileEvents++;
        String op = frame.text(AuditFrame.OP);
        if (op == null || !FileDetails.OPERATIONS.contains(op)) {
            return;
        }
        // A file may be named after a secret (a key's file name, a token in a cache path): paths are redacted too.
        Found findings = new Found();
        String rawPath = paths.view(frame.text(AuditFrame.PATH), frame.text(AuditFrame.BASE));
        String path = redact(rawPath, findings, true);
        String rawTarget = null;
        String target = null;
        if (frame.has(AuditFrame.TARGET)) {
            rawTarget = op.equals("symlink")
                    ? frame.text(AuditFrame.TARGET)
                    : paths.view(frame.text(AuditFrame.TARGET), frame.text(AuditFrame.BASE2));
            target = redact(rawTarget, findings, true);
        }
        List<RedactionCount> redactions = findings.list();
        long found = count(redactions);
        redacted += found;
        int pid = (int) Math.max(0, frame.number(AuditFrame.PID, 0));
        List<String> flags = op.equals("rename") ? renameFlags(frame) : openFlags(frame);
        FileDetails details =
                new FileDetails(op, path, target, flags, pid, 1, 1, frame.has(AuditFrame.RACY), frame.escaped());
        Instant ts = time(frame);
        if (frame.has(AuditFrame.REFUSED)) {
            refused(base(ts).kind(AuditRecord.KIND_FILE).file(details).redactions(redactions));
            return;
        }
        // A Unix socket bound to an abstract name (op bind, "@name") makes no file.
        if (changed.size() < DISTINCT_FILES && !op.equals("bind")) {
            changed.add(pathHash(rawPath));
            if (op.equals("rename") && rawTarget != null && changed.size() < DISTINCT_FILES) {
                changed.add(pathHash(rawTarget));
            }
        }
        // The target too: a second rename or symlink to another target is another event, not a repeat; the flags too
        // (a truncating open is not an appending one). Of the paths as given, before redaction (see exec).
        String flagged = String.join(",", flags);
        String key = "f\0" + pid + '\0' + op + '\0' + flagged + '\0' + rawPath + '\0'
                + (rawTarget == null ? "" : "\0" + rawTarget) + '\0'
                + marks(false, details.racy(), details.escaped());
        // A key seen before in this window is counted where its first event was: its record, or the fold it went to.
        Tally seen = keys.get(key);
        if (seen != null) {
            seen.repeat(ts);
            counted(Repeat.file(seen, found));
            return;
        }
        // Per operation: a flood of one (unlinks of paths that are not there) must not fold another's records.
        if (fileRecords.getOrDefault(op, 0) >= FILE_RECORDS_PER_WINDOW || overBudget) {
            String foldKey = "f\0" + op + '\0' + flagged + '\0' + marks(false, details.racy(), details.escaped());
            Fold fold = folds.computeIfAbsent(foldKey, k -> Fold.file(this, details, ANYWHERE));
            fold.add(ts, true);
            counted(hold(key, fold) ? Repeat.file(fold, found) : null);
            return;
        }
        // A fold shows its first event's marks: every event it counts has them (racy, escaped), or it is another fold.
        String directoryKey = pid + "\0" + op + '\0' + flagged + '\0' + marks(false, details.racy(), details.escaped())
                + '\0' + PathView.directoryOf(rawPath);
        int inDirectory = pathsInDirectory.merge(directoryKey, 1, Integer::sum);
        if (inDirectory > PATHS_PER_DIRECTORY) {
            Fold fold = folds.computeIfAbsent(
                    "d\0" + directoryKey, k -> Fold.file(this, details, PathView.directoryOf(path)));
            fold.add(ts, true);
            counted(hold(key, fold) ? Repeat.file(fold, found) : null);
            return;
        }
        fileRecords.merge(op, 1, Integer::sum);
        Pending pending = new Pending(this, null, details, redactions, ts);
        counted(hold(key, pending) ? Repeat.file(pending, found) : null);
        out.write(pending.withCount(1));
    }

    /**
     * A path or argument as the catalog redacts it. A text the catalog found nothing in is remembered, and its later
     * occurrences in the session are not scanned again: the same compiler flags, include directories and working
     * directory come with nearly every program a build starts, and the scan (a fresh streaming redactor per text) was
     * the largest part of the launcher's work per exec record (docs/benchmarks.md, run 28). The catalog is fixed for
     * the session and scans paths and arguments alike, so what was clean once is clean again; only texts of at most
     * {@link #CLEAN_TEXT_CHARS} characters are remembered, {@link #CLEAN_TEXTS} at most, forgotten all at once when
     * full.
     */
    private String redact(String text, Found found, boolean path) {
        if (clean.contains(text)) {
            return text;
        }
        Findings own = new Findings();
        String out = path ? redactor.redactPath(text, own) : redactor.redactArgument(text, own);
        String location = path ? Redactor.LOCATION_PATH : Redactor.LOCATION_ARGV;
        if (own.refusal().isPresent()) {
            // A secret the catalog found but cannot overwrite in place (a wide encoding), or encodings nested deeper
            // than it reads: where the proxy refuses the request, a record cannot refuse its text, so none of it is
            // written. The text's own findings are counted, and the refusal under its reason.
            String reason = own.refusal().get().reason();
            found.add(own);
            found.add(reason, location, 1);
            return Findings.NOT_REWRITABLE.equals(reason) ? NOT_REWRITABLE_TEXT : UNREADABLE_TEXT;
        }
        found.add(own);
        if (out == text && own.total() == 0 && text.length() <= CLEAN_TEXT_CHARS) {
            if (clean.size() >= CLEAN_TEXTS) {
                clean.clear();
            }
            clean.add(text);
        }
        return out;
    }

    /** What a record says in place of a text with a secret the catalog cannot overwrite where it is. */
    static final String NOT_REWRITABLE_TEXT = "[REDACTED:whole-text-not-rewritable]";

    /** What a record says in place of a text whose encodings are nested deeper than the catalog reads. */
    static final String UNREADABLE_TEXT = "[REDACTED:whole-text-decode-depth]";

    /** The findings of one event's texts, in the order first seen. */
    private static final class Found {
        private final Map<String, RedactionCount> counts = new LinkedHashMap<>();

        void add(Findings findings) {
            if (findings.total() == 0) {
                return;
            }
            for (Findings.Finding f : findings.list()) {
                add(f.kind(), f.location(), f.count());
            }
        }

        void add(String kind, String location, int count) {
            counts.merge(
                    kind + '\0' + location,
                    new RedactionCount(kind, location, count),
                    (a, b) -> new RedactionCount(kind, location, a.count() + b.count()));
        }

        List<RedactionCount> list() {
            return counts.isEmpty() ? List.of() : List.copyOf(counts.values());
        }
    }

    private static long count(List<RedactionCount> redactions) {
        long sum = 0;
        for (RedactionCount r : redactions) {
            sum += r.count();
        }
        return sum;
    }

    /**
     * Notes where an event was counted, so that its frame's repeats are counted there ({@link #frame(ByteBuf)}); null
     * when its key is not held in the window (past {@link #KEYS_PER_WINDOW}), as each such event counts as a new path.
     */
    private void counted(Repeat repeat) {
        last = repeat;
    }

    private static String marks(boolean missing, boolean racy, boolean escaped) {
        return (missing ? "m" : "") + (racy ? "r" : "") + (escaped ? "e" : "");
    }

    /**
     * Holds a key with where its events are counted (its record, or its fold), so that its later events in the window
     * are counted there, while the window holds fewer than {@link #KEYS_PER_WINDOW} keys and {@link
     * #HELD_BYTES_PER_WINDOW} bytes; past that each of its events is taken as a new one. True when it is held.
     */
    private boolean hold(String key, Tally tally) {
        // The key, and about as much again for the record or fold it names (paths, cwd, argv as written).
        if (keys.size() >= KEYS_PER_WINDOW || !afford(4L * key.length())) {
            return false;
        }
        keys.put(key, tally);
        return true;
    }

    /** Takes {@code bytes} (and an entry's fixed cost) from the window's budget; false, taking nothing, past it. */
    private boolean afford(long bytes) {
        long cost = bytes + 96;
        if (heldBytes + cost > HELD_BYTES_PER_WINDOW) {
            return false;
        }
        heldBytes += cost;
        return true;
    }

    private static long argvChars(ExecDetails details) {
        long chars = details.path().length()
                + (details.cwd() == null ? 0 : details.cwd().length());
        for (String a : details.argv()) {
            chars += a.length();
        }
        return chars;
    }

    /** What a fold of every further program of a window shows: no path, no arguments, the marks it folds. */
    private static ExecDetails anyProgram(ExecDetails first) {
        return new ExecDetails(
                ANYWHERE,
                List.of(),
                true,
                null,
                0,
                0,
                first.uid(),
                1,
                first.racy(),
                1,
                first.missing(),
                first.escaped());
    }

    private long pathHash(String path) {
        return ByteBuffer.wrap(sha256.digest(path.getBytes(StandardCharsets.UTF_8)))
                .getLong();
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

    /** renameat2's flags, in words. */
    private static List<String> renameFlags(AuditFrame frame) {
        long flags = frame.number(AuditFrame.RENAME, 0);
        List<String> names = new ArrayList<>();
        if ((flags & 1) != 0) {
            names.add("noreplace");
        }
        if ((flags & 2) != 0) {
            names.add("exchange");
        }
        if ((flags & 4) != 0) {
            names.add("whiteout");
        }
        return names;
    }

    private static Instant time(AuditFrame frame) {
        return time(frame.number(AuditFrame.TIME, -1));
    }

    private static Instant time(long ms) {
        return ms < 0 ? Instant.now() : Instant.ofEpochMilli(ms);
    }

    /** What a later event of a key held in the window is counted on: the key's first record, or a fold. */
    private interface Tally {
        void repeat(Instant ts);

        /** Takes one event back: from the count still owed, else from the key's next event. */
        void unrepeat();
    }

    /**
     * A frame's repeats: where they are counted, the secrets each one's own paths and arguments held, and which of the
     * session's counts each adds to (a program run, a file event, or neither: a PATH search's miss).
     */
    private record Repeat(Tally tally, long redactions, boolean program, boolean file) {
        static Repeat exec(Tally tally, long redactions, boolean program) {
            return new Repeat(tally, redactions, program, false);
        }

        static Repeat file(Tally tally, long redactions) {
            return new Repeat(tally, redactions, false, true);
        }

        void count(JailActivity activity, Instant ts) {
            if (program) {
                activity.programs++;
            }
            if (file) {
                activity.fileEvents++;
            }
            activity.redacted += redactions;
            tally.repeat(ts);
        }

        void uncount(JailActivity activity) {
            if (program) {
                activity.programs--;
            }
            if (file) {
                activity.fileEvents--;
            }
            activity.redacted -= redactions;
            tally.unrepeat();
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    private AuditRecord.Builder base(Instant ts) {
        return AuditRecord.builder().ts(ts).session(session);
    }

    /** The first event of a key, written at once; {@code more} counts its later events in the window. */
    private static final class Pending implements Tally {
        private final JailActivity owner;
        private final ExecDetails exec;
        private final FileDetails file;
        private final List<RedactionCount> redactions;
        private Instant last;
        private long more;
        /** Events taken back after this record's first was written: the key's next ones are not counted. */
        private long owed;

        Pending(JailActivity owner, ExecDetails exec, FileDetails file, List<RedactionCount> redactions, Instant ts) {
            this.owner = owner;
            this.exec = exec;
            this.file = file;
            this.redactions = redactions;
            this.last = ts;
        }

        @Override
        public void repeat(Instant ts) {
            if (owed > 0) {
                owed--;
                return;
            }
            more++;
            last = ts;
        }

        @Override
        public void unrepeat() {
            if (more > 0) {
                more--;
            } else {
                owed++;
            }
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
    private static final class Fold implements Tally {
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

        /** Events taken back when this fold counted only them: its next ones are not counted. */
        private long owed;

        @Override
        public void repeat(Instant ts) {
            add(ts, false);
        }

        @Override
        public void unrepeat() {
            if (count > 1) {
                count--;
            } else {
                owed++;
            }
        }

        void add(Instant ts, boolean newPath) {
            if (owed > 0) {
                owed--;
                return;
            }
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
