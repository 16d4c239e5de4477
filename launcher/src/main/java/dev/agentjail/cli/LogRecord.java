package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditRecord;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * One audit record as read back from a log (schema v1, docs/audit-log.md): the documented fields, typed. Fields the
 * reader does not know (the hash chain's {@code prev_hash} and {@code hmac}, future additions) are not kept.
 *
 * <p>Nullable strings are {@code null} when the line did not carry them; {@code port} and {@code status} are 0 then.
 * Strings are exactly what the log holds: hosts and paths come from the agent's requests, so print them through
 * {@link LogRecordText#printable} and never into markup unescaped.
 *
 * @param seq the hash chain's per-file sequence number, when the log has one
 * @param mcp the MCP server, method and tool of the request, when the proxy recognised an MCP call
 * @param websocket the message counts of a WebSocket relay's {@code tunnel-close} record
 * @param exec the program an {@code exec} record names (docs/audit-log.md "Inside the jail")
 * @param file the change a {@code file} record names
 * @param gap what an {@code audit-gap} record says is missing
 * @param sessionInfo the {@code agentjail run} session details of {@code session-start}/{@code session-end} records
 */
record LogRecord(
        int version,
        String kind,
        Instant ts,
        String sessionId,
        String decision,
        String reason,
        String rule,
        String method,
        String scheme,
        String host,
        int port,
        String path,
        int status,
        long bytesOut,
        long bytesIn,
        long durationMs,
        String tls,
        String client,
        String resolvedIp,
        String error,
        String firstBytesSha256,
        List<Redaction> redactions,
        Mcp mcp,
        WebSocket websocket,
        Exec exec,
        FileChange file,
        Gap gap,
        SessionInfo sessionInfo,
        OptionalLong seq) {

    static final String REQUEST = AuditRecord.KIND_REQUEST;
    static final String TUNNEL_CLOSE = AuditRecord.KIND_TUNNEL_CLOSE;
    static final String SESSION_START = AuditRecord.KIND_SESSION_START;
    static final String SESSION_END = AuditRecord.KIND_SESSION_END;
    static final String EXEC = AuditRecord.KIND_EXEC;
    static final String FILE = AuditRecord.KIND_FILE;
    static final String AUDIT_GAP = AuditRecord.KIND_AUDIT_GAP;
    static final String ALLOW = AuditRecord.ALLOW;
    static final String DENY = AuditRecord.DENY;
    static final String ERROR = AuditRecord.ERROR;

    LogRecord {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(ts, "ts");
        Objects.requireNonNull(sessionId, "session");
        Objects.requireNonNull(seq, "seq");
        if (REQUEST.equals(kind)) {
            require(decision != null, "a request record needs \"decision\"");
            require(reason != null, "a request record needs \"reason\"");
            require(tls != null, "a request record needs \"tls\"");
        }
        require(port >= 0 && port <= 65_535, "\"port\" out of range: " + port);
        require(status == 0 || (status >= 100 && status <= 999), "\"status\" out of range: " + status);
        require(bytesOut >= 0 && bytesIn >= 0 && durationMs >= 0, "negative byte count or duration");
        redactions = redactions == null ? List.of() : List.copyOf(redactions);
        require(!EXEC.equals(kind) || exec != null, "an exec record needs \"exec\"");
        require(!FILE.equals(kind) || file != null, "a file record needs \"file\"");
        require(!AUDIT_GAP.equals(kind) || gap != null, "an audit-gap record needs \"gap\"");
    }

    /** Whether this is an {@code exec} record: a program the jail started. */
    boolean isExec() {
        return EXEC.equals(kind);
    }

    /** Whether this is a {@code file} record: a change to the jail's file tree. */
    boolean isFile() {
        return FILE.equals(kind);
    }

    /** Whether this is an {@code audit-gap} record: exec or file events the log is missing. */
    boolean isAuditGap() {
        return AUDIT_GAP.equals(kind);
    }

    boolean isRequest() {
        return REQUEST.equals(kind);
    }

    boolean isDenied() {
        return DENY.equals(decision);
    }

    boolean isAllowed() {
        return ALLOW.equals(decision);
    }

    boolean isError() {
        return ERROR.equals(decision);
    }

    /** The number of secrets found, over every kind and location. */
    long redactionCount() {
        long n = 0;
        for (Redaction r : redactions) {
            n += r.count();
        }
        return n;
    }

    /**
     * Whether this record's bytes are counted nowhere else: every request record, and the {@code tunnel-close} of a
     * raw tunnel or a WebSocket relay (an intercepted tunnel's bytes are already in its inner requests' records).
     */
    boolean carriesOwnBytes() {
        if (isRequest()) {
            return true;
        }
        return TUNNEL_CLOSE.equals(kind) && (AuditRecord.TLS_TUNNEL.equals(tls) || status == 101);
    }

    /** Whether this is the {@code tunnel-close} record of a WebSocket relay: one per connection, with its counts. */
    boolean isWebSocket() {
        return TUNNEL_CLOSE.equals(kind) && websocket != null;
    }

    /**
     * What was found in a WebSocket relay's messages (locations {@code websocket-text}, {@code -binary}, {@code
     * -control}); the record's other redactions are its handshake's, which its upgrade request's record holds too.
     */
    List<Redaction> messageRedactions() {
        if (websocket == null) {
            return List.of();
        }
        return redactions.stream()
                .filter(r -> r.location().startsWith(WebSocket.LOCATION_PREFIX))
                .toList();
    }

    /** The number of secrets found in a WebSocket relay's messages. */
    long messageRedactionCount() {
        long n = 0;
        for (Redaction r : messageRedactions()) {
            n += r.count();
        }
        return n;
    }

    /** The MCP tool name, or {@code null} when the record is no MCP tool call. */
    String mcpTool() {
        return mcp == null ? null : mcp.tool();
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** What the redaction step found in one place: never the value. */
    record Redaction(String kind, String location, long count) {
        Redaction {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(location, "location");
            require(count >= 1, "a redaction count must be at least 1");
        }
    }

    /** A WebSocket relay's messages each way (each counted once, however fragmented): never their content. */
    record WebSocket(long messagesOut, long messagesIn) {
        /** The redaction locations of WebSocket messages. */
        static final String LOCATION_PREFIX = "websocket-";

        WebSocket {
            require(messagesOut >= 0 && messagesIn >= 0, "negative WebSocket message count");
        }
    }

    /** The MCP call a request carried; any part may be {@code null}. */
    record Mcp(String server, String method, String tool) {
        /** The tool with its server when known, e.g. {@code github/create_issue}; {@code null} without a tool. */
        String toolLabel() {
            if (tool == null) {
                return null;
            }
            return server == null ? tool : server + "/" + tool;
        }
    }

    /**
     * A program the jail started: argv already redacted by the writer, but still the agent's text, so printed only
     * through {@link LogRecordText#printable}.
     *
     * @param cwd the caller's working directory, {@code null} when the record has none
     * @param count how many identical starts the record stands for (coalescing, docs/audit-log.md)
     * @param commands how many distinct command lines a folded record stands for (1 when not folded)
     * @param missing the program's file was not there: a {@code PATH} search's miss, which ran nothing
     */
    record Exec(
            String path,
            List<String> argv,
            boolean argvTruncated,
            String cwd,
            long pid,
            long ppid,
            long uid,
            long count,
            boolean racy,
            long commands,
            boolean missing,
            boolean escaped) {
        Exec(
                String path,
                List<String> argv,
                boolean argvTruncated,
                String cwd,
                long pid,
                long ppid,
                long uid,
                long count,
                boolean racy) {
            this(path, argv, argvTruncated, cwd, pid, ppid, uid, count, racy, 1, false, false);
        }

        Exec {
            Objects.requireNonNull(path, "exec.path");
            argv = List.copyOf(argv);
            require(count >= 1, "\"exec.count\" must be at least 1");
            require(pid >= 0 && ppid >= 0, "negative pid in \"exec\"");
            require(commands >= 1, "\"exec.commands\" must be at least 1");
        }
    }

    /**
     * A change to the jail's file tree.
     *
     * @param path the path changed; ending in {@code /} for a record that folds paths of one directory, {@code *} for
     *     one that folds paths anywhere
     * @param target for rename the new name, for link the existing file, for symlink the link's text; else null
     * @param paths how many distinct paths a folded record stands for (1 when not folded)
     */
    record FileChange(
            String op,
            String path,
            String target,
            List<String> flags,
            long pid,
            long count,
            long paths,
            boolean racy,
            boolean escaped) {
        /** The {@code path} of a record that folds paths anywhere in the tree. */
        static final String ANYWHERE = "*";

        FileChange(
                String op,
                String path,
                String target,
                List<String> flags,
                long pid,
                long count,
                long paths,
                boolean racy) {
            this(op, path, target, flags, pid, count, paths, racy, false);
        }

        FileChange {
            Objects.requireNonNull(op, "file.op");
            Objects.requireNonNull(path, "file.path");
            flags = flags == null ? List.of() : List.copyOf(flags);
            require(count >= 1 && paths >= 1, "\"file.count\" and \"file.paths\" must be at least 1");
            require(pid >= 0, "negative pid in \"file\"");
        }

        /** Whether the record stands for several paths of one directory ({@code dir/}) or of anywhere ({@code *}). */
        boolean folded() {
            return path.equals(ANYWHERE) || path.endsWith("/");
        }
    }

    /** What an {@code audit-gap} record says is missing: events known unrecorded (0: not known), auditing stopped. */
    record Gap(long missed, boolean stopped) {
        Gap {
            require(missed >= 0, "negative \"gap.missed\"");
        }
    }

    /**
     * The extra fields of session records; each is {@code null} when absent.
     *
     * @param command the program and a note with the number of its arguments (the arguments are never logged)
     * @param programs at the end, the session's exec events (null: exec auditing off)
     * @param filesChanged at the end, the distinct paths it changed (null: file auditing off)
     */
    record SessionInfo(
            String policySha256,
            String policySource,
            List<String> command,
            List<String> binds,
            List<String> envNames,
            Long exitCode,
            Long requests,
            Long denials,
            List<String> limits,
            List<String> limitHits,
            Long programs,
            Long filesChanged) {
        SessionInfo {
            limits = limits == null ? null : List.copyOf(limits);
            limitHits = limitHits == null ? null : List.copyOf(limitHits);
            command = command == null ? null : List.copyOf(command);
            binds = binds == null ? null : List.copyOf(binds);
            envNames = envNames == null ? null : List.copyOf(envNames);
        }
    }
}
