package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The few lines {@code agentjail run} prints on stderr when a session ends: requests, denials with their top hosts,
 * secrets redacted (in requests and WebSocket messages), WebSocket connections with their messages, the audit
 * log's path, and how many programs the jail ran and files it changed (when that was audited).
 *
 * <p>The counts of requests and denials come from the session's own sink. The hosts and the redactions come from the
 * log itself, read backwards from its end: only lines of this session are parsed, and reading stops at the session's
 * start record or once every request the sink counted has been seen, so the cost follows the session's size, not the
 * log's. Should the log have been rotated during the session, the older part is not read and the details cover what
 * the current file holds.
 */
final class SessionSummary {
    static final int TOP_HOSTS = 3;

    private static final int BLOCK_BYTES = 64 * 1024;

    private final Map<String, Long> deniedHosts = new HashMap<>();
    private final Map<String, Long> redactionKinds = new HashMap<>();
    private long requestsSeen;
    private long webSockets;
    private long webSocketMessagesOut;
    private long webSocketMessagesIn;

    /** {@link #print(PrintWriter, String, Path, long, long, Long, Long)} for a session without exec and file audit. */
    static void print(PrintWriter err, String sessionId, Path auditLog, long requests, long denials) {
        print(err, sessionId, auditLog, requests, denials, null, null);
    }

    /**
     * Prints the summary; a log that cannot be read leaves the details out and says so, it never fails the run.
     *
     * @param programs the programs the jail ran (exec events), {@code null} when exec auditing was off
     * @param filesChanged the distinct paths the jail changed, {@code null} when file auditing was off
     */
    static void print(
            PrintWriter err,
            String sessionId,
            Path auditLog,
            long requests,
            long denials,
            Long programs,
            Long filesChanged) {
        print(err, sessionId, auditLog, requests, denials, programs, filesChanged, 0);
    }

    /**
     * As {@link #print(PrintWriter, String, Path, long, long, Long, Long)}, with the secrets the catalog found in the
     * jail's program arguments and paths ({@code jailRedacted}), which the jail line names when there are any.
     */
    static void print(
            PrintWriter err,
            String sessionId,
            Path auditLog,
            long requests,
            long denials,
            Long programs,
            Long filesChanged,
            long jailRedacted) {
        SessionSummary summary = new SessionSummary();
        String problem = null;
        if (requests > 0) {
            try {
                summary.scan(auditLog, sessionId, requests);
            } catch (IOException | RuntimeException e) {
                problem = IoErrors.message(e);
            }
        }
        String jail = jail(programs, filesChanged);
        if (jail != null && jailRedacted > 0) {
            jail += "; " + jailRedacted + (jailRedacted == 1 ? " secret" : " secrets")
                    + " redacted from their arguments and paths";
        }
        summary.write(err, sessionId, auditLog, requests, denials, jail, problem);
    }

    /** {@code ran 214 programs, changed 37 files}, the part whose auditing was on; {@code null} with neither. */
    static String jail(Long programs, Long filesChanged) {
        String ran = programs == null ? null : "ran " + programs + (programs == 1 ? " program" : " programs");
        String changed =
                filesChanged == null ? null : "changed " + filesChanged + (filesChanged == 1 ? " file" : " files");
        if (ran != null && changed != null) {
            return ran + ", " + changed;
        }
        return ran != null ? ran : changed;
    }

    /** Reads the session's request records from the end of {@code log} (see the class comment). */
    void scan(Path log, String sessionId, long expectedRequests) throws IOException {
        byte[] marker = ("\"session\":\"" + sessionId + "\"").getBytes(StandardCharsets.UTF_8);
        try (FileChannel channel = FileChannel.open(log, StandardOpenOption.READ)) {
            long pos = channel.size();
            byte[] carry = new byte[0];
            boolean dropping = false;
            while (pos > 0) {
                int n = (int) Math.min(BLOCK_BYTES, pos);
                pos -= n;
                byte[] block = new byte[n + carry.length];
                ByteBuffer buf = ByteBuffer.wrap(block, 0, n);
                while (buf.hasRemaining()) {
                    if (channel.read(buf, pos + buf.position()) < 0) {
                        throw new IOException("the file shrank while being read");
                    }
                }
                System.arraycopy(carry, 0, block, n, carry.length);
                int end = block.length;
                for (int i = block.length - 1; i >= 0; i--) {
                    if (block[i] != '\n') {
                        continue;
                    }
                    if (dropping) {
                        dropping = false;
                    } else if (line(block, i + 1, end, marker, sessionId, expectedRequests)) {
                        return;
                    }
                    end = i;
                }
                if (dropping) {
                    carry = new byte[0];
                } else if (end > LogReader.MAX_LINE_BYTES) {
                    carry = new byte[0];
                    dropping = true;
                } else {
                    carry = Arrays.copyOf(block, end);
                }
            }
            if (!dropping) {
                line(carry, 0, carry.length, marker, sessionId, expectedRequests);
            }
        }
    }

    /** Counts one line if it is a record of the session; true once there is nothing more to look for. */
    private boolean line(byte[] b, int from, int to, byte[] marker, String sessionId, long expectedRequests) {
        if (to - from < marker.length || !contains(b, from, to, marker)) {
            return false;
        }
        LogRecord r;
        try {
            String text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b, from, to - from))
                    .toString();
            r = LogRecordJson.parseRecord(text);
        } catch (CharacterCodingException | LogRecordException e) {
            return false; // A torn or foreign line: the detail lines are best effort.
        }
        if (!sessionId.equals(r.sessionId())) {
            return false;
        }
        if (LogRecord.SESSION_START.equals(r.kind())) {
            return true;
        }
        if (r.isRequest() || r.isWebSocket()) {
            add(r);
        }
        return requestsSeen >= expectedRequests;
    }

    /**
     * Counts a request record, or a WebSocket relay's record: its connection, messages and the secrets redacted in
     * them (the handshake's are its upgrade request's). Each connection's record follows its request in the log, so
     * reading backwards meets it before the request that stops the scan.
     */
    void add(LogRecord r) {
        if (r.isWebSocket()) {
            webSockets++;
            webSocketMessagesOut += r.websocket().messagesOut();
            webSocketMessagesIn += r.websocket().messagesIn();
            for (LogRecord.Redaction x : r.messageRedactions()) {
                redactionKinds.merge(x.kind(), x.count(), Long::sum);
            }
            return;
        }
        requestsSeen++;
        if (r.isDenied()) {
            deniedHosts.merge(r.host() == null ? LogSummaryStats.NO_HOST : r.host(), 1L, Long::sum);
        }
        for (LogRecord.Redaction x : r.redactions()) {
            redactionKinds.merge(x.kind(), x.count(), Long::sum);
        }
    }

    void write(
            PrintWriter err,
            String sessionId,
            Path auditLog,
            long requests,
            long denials,
            String jail,
            String problem) {
        long redacted = 0;
        for (long n : redactionKinds.values()) {
            redacted += n;
        }
        // Concatenated, not formatted: this line is the last thing every session does, and a cold JVM takes
        // 10-20 ms to set up a Formatter.
        err.println("agentjail: session " + sessionId + ": " + requests + (requests == 1 ? " request" : " requests")
                + ", " + denials + " denied, " + redacted + (redacted == 1 ? " secret" : " secrets")
                + " redacted; audit log " + auditLog);
        if (!deniedHosts.isEmpty()) {
            err.println("agentjail:   denied: " + top(deniedHosts, TOP_HOSTS));
        }
        if (!redactionKinds.isEmpty()) {
            err.println("agentjail:   redacted: " + top(redactionKinds, Integer.MAX_VALUE));
        }
        if (webSockets > 0) {
            err.println("agentjail:   websocket: " + webSockets + (webSockets == 1 ? " connection, " : " connections, ")
                    + webSocketMessagesOut + (webSocketMessagesOut == 1 ? " message" : " messages") + " sent, "
                    + webSocketMessagesIn + " received");
        }
        if (jail != null) {
            err.println("agentjail:   " + jail);
        }
        if (problem != null) {
            err.println("agentjail:   (no details: cannot read the audit log: " + problem + ")");
        }
    }

    /** {@code name (count)} by count, then name; past {@code limit}, {@code and N more}. */
    private static String top(Map<String, Long> counts, int limit) {
        List<Map.Entry<String, Long>> entries = new ArrayList<>(counts.entrySet());
        entries.sort(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())
                .thenComparing(Map.Entry.comparingByKey()));
        String shown = entries.stream()
                .limit(limit)
                .map(e -> LogRecordText.printable(e.getKey()) + " (" + e.getValue() + ")")
                .collect(Collectors.joining(", "));
        int more = entries.size() - Math.min(limit, entries.size());
        return more > 0 ? shown + " and " + more + " more" : shown;
    }

    private static boolean contains(byte[] b, int from, int to, byte[] needle) {
        outer:
        for (int i = from; i <= to - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (b[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
