package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Per-host counts of audit records: requests, denials, errors, bytes each way, secrets redacted (in requests and in
 * WebSocket messages), WebSocket connections and their messages each way, MCP tools called.
 * Requests are {@code request} records; bytes also come from the {@code tunnel-close} records that carry bytes no
 * request record holds (see {@link LogRecord#carriesOwnBytes()}). Inside the jail: runs per program, changes per
 * directory and operation (each record's {@code count}), and the audit gaps.
 */
final class LogSummaryStats {
    /** The key of records without a host (malformed input refused before a target was known). */
    static final String NO_HOST = "(no host)";

    /** The directory of a file record that folds paths anywhere ({@code path} {@code *}). */
    static final String ANYWHERE = "(anywhere)";

    /** The directory of a file at the top of the project (a relative path without a {@code /}). */
    static final String PROJECT = "./";

    private final Map<String, Host> hosts = new HashMap<>();
    private final Host total = new Host("TOTAL");
    private final Set<String> sessions = new HashSet<>();
    private final Map<String, Long> programs = new HashMap<>();
    private final Map<String, Directory> directories = new HashMap<>();
    private final Map<String, Long> gapReasons = new TreeMap<>();
    private long runs;
    private long changes;
    private long gaps;
    private long gapsMissed;
    private long records;
    private Instant first;
    private Instant last;

    /** The counts of one host (or of all of them). */
    static final class Host {
        final String name;
        long requests;
        long allowed;
        long denied;
        long errors;
        long bytesOut;
        long bytesIn;
        long redactions;
        long webSockets;
        long webSocketMessagesOut;
        long webSocketMessagesIn;
        final Map<String, Long> mcpTools = new TreeMap<>();

        Host(String name) {
            this.name = name;
        }

        private void add(LogRecord r) {
            if (r.carriesOwnBytes()) {
                bytesOut += r.bytesOut();
                bytesIn += r.bytesIn();
            }
            if (r.isWebSocket()) {
                webSockets++;
                webSocketMessagesOut += r.websocket().messagesOut();
                webSocketMessagesIn += r.websocket().messagesIn();
                redactions += r.messageRedactionCount();
            }
            if (!r.isRequest()) {
                return;
            }
            requests++;
            if (r.isAllowed()) {
                allowed++;
            } else if (r.isDenied()) {
                denied++;
            } else if (r.isError()) {
                errors++;
            }
            redactions += r.redactionCount();
            String tool = r.mcp() == null ? null : r.mcp().toolLabel();
            if (tool != null) {
                mcpTools.merge(tool, 1L, Long::sum);
            }
        }
    }

    /** The changes in one directory of the jail, per operation. */
    static final class Directory {
        final String name;
        long changes;
        final Map<String, Long> operations = new TreeMap<>();

        Directory(String name) {
            this.name = name;
        }
    }

    /**
     * The directory a file record's change is in: the parent of {@code path} with a trailing {@code /} ({@code ./}
     * for a file at the top of the project), the directory itself for a record that folds its paths ({@code dir/}),
     * and {@value #ANYWHERE} for one that folds paths anywhere ({@code *}).
     */
    static String directoryOf(String path) {
        if (path.equals(LogRecord.FileChange.ANYWHERE)) {
            return ANYWHERE;
        }
        if (path.endsWith("/")) {
            return path;
        }
        int slash = path.lastIndexOf('/');
        return slash < 0 ? PROJECT : path.substring(0, slash + 1);
    }

    void add(LogRecord r) {
        records++;
        sessions.add(r.sessionId());
        if (first == null || r.ts().isBefore(first)) {
            first = r.ts();
        }
        if (last == null || r.ts().isAfter(last)) {
            last = r.ts();
        }
        if ((r.isExec() || r.isFile()) && AuditRecord.DENY.equals(r.decision())) {
            // Refused (audit-unreadable-memory): nothing ran, nothing changed.
            return;
        }
        if (r.isExec()) {
            if (r.exec().missing()) {
                // A PATH search's miss ran nothing.
                return;
            }
            runs += r.exec().count();
            programs.merge(r.exec().path(), r.exec().count(), Long::sum);
            return;
        }
        if (r.isFile()) {
            changes += r.file().count();
            Directory d = directories.computeIfAbsent(directoryOf(r.file().path()), Directory::new);
            d.changes += r.file().count();
            d.operations.merge(r.file().op(), r.file().count(), Long::sum);
            return;
        }
        if (r.isAuditGap()) {
            gaps++;
            gapsMissed += r.gap().missed();
            gapReasons.merge(r.reason() == null ? "-" : r.reason(), 1L, Long::sum);
            return;
        }
        if (!r.isRequest() && !r.carriesOwnBytes()) {
            return;
        }
        String key = r.host() == null ? NO_HOST : r.host();
        hosts.computeIfAbsent(key, Host::new).add(r);
        total.add(r);
    }

    /** Hosts with at least one request or byte, most requests first, then by name. */
    List<Host> hosts() {
        List<Host> list = new ArrayList<>(hosts.values());
        list.sort(Comparator.comparingLong((Host h) -> -h.requests).thenComparing(h -> h.name));
        return list;
    }

    /** Programs by runs (the sum of their exec records' counts), most first, then by path. */
    List<Map.Entry<String, Long>> programs() {
        List<Map.Entry<String, Long>> list = new ArrayList<>(programs.entrySet());
        list.sort(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())
                .thenComparing(Map.Entry.comparingByKey()));
        return list;
    }

    /** Directories by changes, most first, then by name. */
    List<Directory> directories() {
        List<Directory> list = new ArrayList<>(directories.values());
        list.sort(Comparator.comparingLong((Directory d) -> -d.changes).thenComparing(d -> d.name));
        return list;
    }

    /** Programs started in the jail: the sum of every exec record's count. */
    long runs() {
        return runs;
    }

    /** Changes to the jail's files: the sum of every file record's count. */
    long changes() {
        return changes;
    }

    long gaps() {
        return gaps;
    }

    /** The events the audit-gap records say are missing, where they knew. */
    long gapsMissed() {
        return gapsMissed;
    }

    /** Audit-gap records per reason, by reason. */
    Map<String, Long> gapReasons() {
        return gapReasons;
    }

    Host total() {
        return total;
    }

    long records() {
        return records;
    }

    int sessions() {
        return sessions.size();
    }

    /** The earliest record's time, or {@code null} without records. */
    Instant first() {
        return first;
    }

    Instant last() {
        return last;
    }
}
