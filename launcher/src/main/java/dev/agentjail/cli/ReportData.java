package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the HTML report shows, gathered from audit records: per-host counts, decisions, redactions by kind (in requests
 * and WebSocket messages), WebSocket connections and messages, MCP calls by tool, requests over time by host, and the
 * denials. {@link #toJson()} is the data the page's script draws from;
 * every string in it has been made {@linkplain LogRecordText#printable printable}.
 */
final class ReportData {
    /** The denials table keeps this many rows (the first ones); the count of the rest is shown. */
    static final int MAX_DENIAL_ROWS = 2000;
    /** The time chart stacks this many hosts; the rest share one series. */
    static final int MAX_SERIES_HOSTS = 8;

    /** The commands timeline keeps this many rows (the first ones); the count of the rest is shown. */
    static final int MAX_COMMAND_ROWS = 2000;

    /** Each session's files-changed table keeps this many directories (the most changed); the rest are added up. */
    static final int MAX_DIRECTORY_ROWS = 200;

    static final String OTHER_HOSTS = "(other hosts)";
    static final int MAX_BUCKETS = 60;

    private static final long[] BUCKET_SECONDS = {
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800,
        1_209_600, 2_592_000
    };

    private final LogSummaryStats stats = new LogSummaryStats();
    private final Map<String, Long> redactions = new TreeMap<>();
    private final Map<String, Long> mcpTools = new TreeMap<>();
    private final List<LogRecord> denials = new ArrayList<>();
    private final List<LogRecord> commands = new ArrayList<>();
    private final Map<String, Map<String, LogSummaryStats.Directory>> changes = new LinkedHashMap<>();
    private final List<LogRecord> gaps = new ArrayList<>();
    private long commandCount;
    private long denialCount;
    private long[] requestTimes = new long[1024];
    private String[] requestHosts = new String[1024];
    private int requestCount;

    void add(LogRecord r) {
        stats.add(r);
        if (r.isExec()) {
            commandCount++;
            if (commands.size() < MAX_COMMAND_ROWS) {
                commands.add(r);
            }
        } else if (r.isFile() && !AuditRecord.DENY.equals(r.decision())) {
            LogSummaryStats.Directory d = changes.computeIfAbsent(r.sessionId(), k -> new HashMap<>())
                    .computeIfAbsent(LogSummaryStats.directoryOf(r.file().path()), LogSummaryStats.Directory::new);
            d.changes += r.file().count();
            d.operations.merge(r.file().op(), r.file().count(), Long::sum);
        } else if (r.isAuditGap() && gaps.size() < MAX_COMMAND_ROWS) {
            gaps.add(r);
        }
        for (LogRecord.Redaction x : r.messageRedactions()) {
            redactions.merge(x.kind(), x.count(), Long::sum);
        }
        if (!r.isRequest()) {
            return;
        }
        if (requestCount == requestTimes.length) {
            requestTimes = Arrays.copyOf(requestTimes, requestCount * 2);
            requestHosts = Arrays.copyOf(requestHosts, requestCount * 2);
        }
        requestTimes[requestCount] = r.ts().toEpochMilli();
        requestHosts[requestCount] = r.host() == null ? LogSummaryStats.NO_HOST : r.host();
        requestCount++;
        for (LogRecord.Redaction x : r.redactions()) {
            redactions.merge(x.kind(), x.count(), Long::sum);
        }
        String tool = r.mcp() == null ? null : r.mcp().toolLabel();
        if (tool != null) {
            mcpTools.merge(tool, 1L, Long::sum);
        }
        if (r.isDenied()) {
            denialCount++;
            if (denials.size() < MAX_DENIAL_ROWS) {
                denials.add(r);
            }
        }
    }

    LogSummaryStats stats() {
        return stats;
    }

    /** The first {@value #MAX_DENIAL_ROWS} denials, in log order. */
    List<LogRecord> denials() {
        return denials;
    }

    long denialCount() {
        return denialCount;
    }

    /** The first {@value #MAX_COMMAND_ROWS} exec records, in log order. */
    List<LogRecord> commands() {
        return commands;
    }

    /** All exec records, each counted once (however many starts it stands for). */
    long commandCount() {
        return commandCount;
    }

    /** The sessions that changed files, in the order they first did. */
    List<String> changingSessions() {
        return List.copyOf(changes.keySet());
    }

    /** A session's directories by changes, most first, then by name. */
    List<LogSummaryStats.Directory> changes(String session) {
        List<LogSummaryStats.Directory> list =
                new ArrayList<>(changes.get(session).values());
        list.sort(Comparator.comparingLong((LogSummaryStats.Directory d) -> -d.changes)
                .thenComparing(d -> d.name));
        return list;
    }

    /** The audit-gap records, in log order (at most {@value #MAX_COMMAND_ROWS}). */
    List<LogRecord> gaps() {
        return gaps;
    }

    long mcpCalls() {
        return mcpTools.values().stream().mapToLong(Long::longValue).sum();
    }

    long redactionCount() {
        return redactions.values().stream().mapToLong(Long::longValue).sum();
    }

    /** The chart data as plain JSON values (see report.js for how each part is drawn). */
    Map<String, Object> toJson() {
        LogSummaryStats.Host total = stats.total();
        Map<String, Object> root = new LinkedHashMap<>();
        root.put(
                "decisions",
                List.of(item("allow", total.allowed), item("deny", total.denied), item("error", total.errors)));
        List<Object> bytes = new ArrayList<>();
        List<LogSummaryStats.Host> byBytes = new ArrayList<>(stats.hosts());
        byBytes.sort(Comparator.comparingLong((LogSummaryStats.Host h) -> -(h.bytesOut + h.bytesIn))
                .thenComparing(h -> h.name));
        for (LogSummaryStats.Host h : byBytes) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("key", LogRecordText.printable(h.name));
            m.put("sent", h.bytesOut);
            m.put("received", h.bytesIn);
            bytes.add(m);
        }
        root.put("bytes", bytes);
        root.put("redactions", items(redactions));
        root.put("mcp", items(mcpTools));
        Map<String, Object> ws = new LinkedHashMap<>();
        ws.put("connections", total.webSockets);
        ws.put("messages_out", total.webSocketMessagesOut);
        ws.put("messages_in", total.webSocketMessagesIn);
        root.put("websocket", ws);
        root.put("series", series());
        return root;
    }

    /**
     * Requests per time bucket and host: a bucket size from 1 s up, picked so that there are at most {@value
     * #MAX_BUCKETS} buckets, aligned to the epoch; the busiest hosts each get a series and the rest share one.
     */
    private Map<String, Object> series() {
        Map<String, Object> s = new LinkedHashMap<>();
        if (requestCount == 0) {
            s.put("bucketSeconds", 0L);
            s.put("buckets", List.of());
            s.put("hosts", List.of());
            s.put("counts", List.of());
            return s;
        }
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < requestCount; i++) {
            min = Math.min(min, requestTimes[i]);
            max = Math.max(max, requestTimes[i]);
        }
        long bucketMs = bucketSeconds(max - min) * 1000;
        long start = Math.floorDiv(min, bucketMs) * bucketMs;
        int buckets = (int) ((max - start) / bucketMs) + 1;
        List<String> hosts = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        boolean other = false;
        for (LogSummaryStats.Host h : stats.hosts()) {
            if (h.requests == 0) {
                continue;
            }
            if (hosts.size() < MAX_SERIES_HOSTS) {
                index.put(h.name, hosts.size());
                hosts.add(h.name);
            } else {
                other = true;
            }
        }
        int otherIndex = hosts.size();
        long[][] counts = new long[buckets][hosts.size() + (other ? 1 : 0)];
        for (int i = 0; i < requestCount; i++) {
            int b = (int) ((requestTimes[i] - start) / bucketMs);
            counts[b][index.getOrDefault(requestHosts[i], otherIndex)]++;
        }
        List<Object> bucketNames = new ArrayList<>();
        List<Object> rows = new ArrayList<>();
        for (int b = 0; b < buckets; b++) {
            bucketNames.add(LogRecordText.time(Instant.ofEpochMilli(start + b * bucketMs)));
            List<Object> row = new ArrayList<>();
            for (long c : counts[b]) {
                row.add(c);
            }
            rows.add(row);
        }
        List<Object> names = new ArrayList<>();
        hosts.forEach(h -> names.add(LogRecordText.printable(h)));
        if (other) {
            names.add(OTHER_HOSTS);
        }
        s.put("bucketSeconds", bucketMs / 1000);
        s.put("buckets", bucketNames);
        s.put("hosts", names);
        s.put("counts", rows);
        return s;
    }

    /**
     * The smallest listed size that gives at most {@value #MAX_BUCKETS} buckets over {@code spanMs}, counting the one
     * more that aligning the first bucket to the epoch can add.
     */
    static long bucketSeconds(long spanMs) {
        for (long seconds : BUCKET_SECONDS) {
            if (spanMs / (seconds * 1000) + 2 <= MAX_BUCKETS) {
                return seconds;
            }
        }
        long days = Duration.ofMillis(spanMs).toDays() / (MAX_BUCKETS - 2) + 1;
        return days * 86_400;
    }

    private static List<Object> items(Map<String, Long> counts) {
        List<Object> list = new ArrayList<>();
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .forEach(e -> list.add(item(LogRecordText.printable(e.getKey()), e.getValue())));
        return list;
    }

    private static Map<String, Object> item(String key, long value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", key);
        m.put("value", value);
        return m;
    }
}
