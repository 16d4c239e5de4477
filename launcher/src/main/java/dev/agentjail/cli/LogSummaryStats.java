package dev.agentjail.cli;

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
 * request record holds (see {@link LogRecord#carriesOwnBytes()}).
 */
final class LogSummaryStats {
    /** The key of records without a host (malformed input refused before a target was known). */
    static final String NO_HOST = "(no host)";

    private final Map<String, Host> hosts = new HashMap<>();
    private final Host total = new Host("TOTAL");
    private final Set<String> sessions = new HashSet<>();
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

    void add(LogRecord r) {
        records++;
        sessions.add(r.sessionId());
        if (first == null || r.ts().isBefore(first)) {
            first = r.ts();
        }
        if (last == null || r.ts().isAfter(last)) {
            last = r.ts();
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
