package dev.agentjail.proxy.audit;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One line of the audit log: what was asked, what was decided and why (schema v1, documented in docs/audit-log.md).
 *
 * <p>Strings arrive here already free of secrets: no query string, no header value, no body. Nullable fields and
 * zero {@code port}/{@code status} are omitted from the JSON. Free-text fields are bounded so a hostile request
 * cannot make one line arbitrarily large.
 */
public record AuditRecord(
        String kind,
        Instant ts,
        String session,
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
        SessionDetails sessionDetails,
        List<RedactionCount> redactions,
        McpDetails mcp,
        WebSocketDetails websocket,
        ExecDetails exec,
        FileDetails file,
        GapDetails gap) {

    /** Written as {@code "v"} first on every line; bump only for incompatible changes. */
    public static final int SCHEMA_VERSION = 1;

    public static final String KIND_REQUEST = "request";
    /** Written when a CONNECT tunnel closes: its byte counts and duration (the request record came first). */
    public static final String KIND_TUNNEL_CLOSE = "tunnel-close";

    /**
     * One MCP message that is not a request of its own: a server-to-client request the proxy dropped from an event
     * stream, or a list answer it filtered on a {@code GET} stream (the legacy HTTP+SSE transport answers there;
     * docs/mcp.md). Carries {@code mcp}, the decision and reason; the exchange it came in has its own record.
     */
    public static final String KIND_MCP_MESSAGE = "mcp-message";

    /** A program started inside the jail (carries {@code exec}); see docs/audit-log.md "Inside the jail". */
    public static final String KIND_EXEC = "exec";

    /** A change to the jail's file tree (carries {@code file}). */
    public static final String KIND_FILE = "file";

    /** Exec or file events the log is missing, and why (carries {@code gap}, {@code reason}). */
    public static final String KIND_AUDIT_GAP = "audit-gap";

    public static final String KIND_SESSION_START = "session-start";
    public static final String KIND_SESSION_END = "session-end";
    public static final String ALLOW = "allow";
    public static final String DENY = "deny";
    public static final String ERROR = "error";
    public static final String SCHEME_HTTP = "http";
    public static final String SCHEME_HTTPS = "https";
    public static final String TLS_NONE = "none";
    public static final String TLS_TUNNEL = "tunnel";
    public static final String TLS_INTERCEPT = "intercept";

    /** Paths longer than this keep their first {@value} chars and gain a marker with the full path's hash. */
    public static final int MAX_PATH_CHARS = 2048;

    /** The same bound for every other string field; legitimate values are far shorter. */
    public static final int MAX_FIELD_CHARS = 512;

    private static final Set<String> DECISIONS = Set.of(ALLOW, DENY, ERROR);
    private static final Set<String> TLS_MODES = Set.of(TLS_NONE, TLS_TUNNEL, TLS_INTERCEPT);

    public AuditRecord {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(ts, "ts");
        Objects.requireNonNull(session, "session");
        if (KIND_REQUEST.equals(kind)) {
            // A request record without these could not answer "what happened and why".
            Objects.requireNonNull(decision, "decision");
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(tls, "tls");
        }
        check(decision == null || DECISIONS.contains(decision), "decision", decision);
        check(tls == null || TLS_MODES.contains(tls), "tls", tls);
        check(scheme == null || scheme.equals(SCHEME_HTTP) || scheme.equals(SCHEME_HTTPS), "scheme", scheme);
        check(port >= 0 && port <= 65_535, "port", port);
        check(status == 0 || (status >= 100 && status <= 999), "status", status);
        check(bytesOut >= 0, "bytesOut", bytesOut);
        check(bytesIn >= 0, "bytesIn", bytesIn);
        check(durationMs >= 0, "durationMs", durationMs);
        kind = bound(kind, MAX_FIELD_CHARS);
        session = bound(session, MAX_FIELD_CHARS);
        reason = bound(reason, MAX_FIELD_CHARS);
        rule = bound(rule, MAX_FIELD_CHARS);
        method = bound(method, MAX_FIELD_CHARS);
        host = bound(host, MAX_FIELD_CHARS);
        path = bound(path, MAX_PATH_CHARS);
        client = bound(client, MAX_FIELD_CHARS);
        resolvedIp = bound(resolvedIp, MAX_FIELD_CHARS);
        error = bound(error, MAX_FIELD_CHARS);
        firstBytesSha256 = bound(firstBytesSha256, MAX_FIELD_CHARS);
        redactions = redactions == null ? List.of() : List.copyOf(redactions);
        check(!KIND_EXEC.equals(kind) || exec != null, "exec", exec);
        check(!KIND_FILE.equals(kind) || file != null, "file", file);
        check(!KIND_AUDIT_GAP.equals(kind) || (gap != null && reason != null), "gap", gap);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Keeps the first {@code max} chars and appends {@code …[truncated sha256=<first 16 hex>]} computed over the whole
     * value, so two long values can still be told apart without storing them.
     */
    static String bound(String value, int max) {
        if (value == null || value.length() <= max) {
            return value;
        }
        // Never cut a surrogate pair in half: the JSON writer would turn the orphan into U+FFFD.
        int end = Character.isHighSurrogate(value.charAt(max - 1)) ? max - 1 : max;
        return value.substring(0, end) + "…[truncated sha256="
                + Sha256.hex(value).substring(0, 16) + "]";
    }

    private static void check(boolean ok, String field, Object value) {
        if (!ok) {
            throw new IllegalArgumentException("invalid audit field " + field + ": " + value);
        }
    }

    /** Mutable, fluent construction of an {@link AuditRecord}; {@code kind} defaults to request and tls to none. */
    public static final class Builder {
        private String kind = KIND_REQUEST;
        private SessionDetails sessionDetails;
        private Instant ts;
        private String session;
        private String decision;
        private String reason;
        private String rule;
        private String method;
        private String scheme;
        private String host;
        private int port;
        private String path;
        private int status;
        private long bytesOut;
        private long bytesIn;
        private long durationMs;
        private String tls = TLS_NONE;
        private String client;
        private String resolvedIp;
        private String error;
        private String firstBytesSha256;
        private List<RedactionCount> redactions = List.of();
        private McpDetails mcp;
        private WebSocketDetails websocket;
        private ExecDetails exec;
        private FileDetails file;
        private GapDetails gap;

        private Builder() {}

        /** The program an {@code exec} record names; null for anything else. */
        public Builder exec(ExecDetails value) {
            exec = value;
            return this;
        }

        /** The change a {@code file} record names; null for anything else. */
        public Builder file(FileDetails value) {
            file = value;
            return this;
        }

        /** What an {@code audit-gap} record says is missing; null for anything else. */
        public Builder gap(GapDetails value) {
            gap = value;
            return this;
        }

        /** The messages a WebSocket relay carried (on its {@code tunnel-close} record); null for anything else. */
        public Builder websocket(WebSocketDetails value) {
            websocket = value;
            return this;
        }

        /** The MCP message this request carried (docs/mcp.md); null for anything else. */
        public Builder mcp(McpDetails value) {
            mcp = value;
            return this;
        }

        public Builder redactions(List<RedactionCount> value) {
            redactions = value;
            return this;
        }

        public Builder kind(String value) {
            kind = value;
            return this;
        }

        public Builder ts(Instant value) {
            ts = value;
            return this;
        }

        public Builder session(String value) {
            session = value;
            return this;
        }

        public Builder decision(String value) {
            decision = value;
            return this;
        }

        public Builder reason(String value) {
            reason = value;
            return this;
        }

        public Builder rule(String value) {
            rule = value;
            return this;
        }

        public Builder method(String value) {
            method = value;
            return this;
        }

        public Builder scheme(String value) {
            scheme = value;
            return this;
        }

        public Builder host(String value) {
            host = value;
            return this;
        }

        public Builder port(int value) {
            port = value;
            return this;
        }

        /** The request path without its query string; the caller strips the query, this record never sees it. */
        public Builder path(String value) {
            path = value;
            return this;
        }

        public Builder status(int value) {
            status = value;
            return this;
        }

        public Builder bytesOut(long value) {
            bytesOut = value;
            return this;
        }

        public Builder bytesIn(long value) {
            bytesIn = value;
            return this;
        }

        public Builder durationMs(long value) {
            durationMs = value;
            return this;
        }

        public Builder tls(String value) {
            tls = value;
            return this;
        }

        public Builder client(String value) {
            client = value;
            return this;
        }

        public Builder resolvedIp(String value) {
            resolvedIp = value;
            return this;
        }

        public Builder error(String value) {
            error = value;
            return this;
        }

        public Builder firstBytesSha256(String value) {
            firstBytesSha256 = value;
            return this;
        }

        /** Hashes the first bytes of a malformed request; the bytes themselves are never kept. */
        public Builder firstBytes(byte[] data, int offset, int length) {
            firstBytesSha256 = Sha256.hex(data, offset, length);
            return this;
        }

        public AuditRecord build() {
            return new AuditRecord(
                    kind,
                    ts,
                    session,
                    decision,
                    reason,
                    rule,
                    method,
                    scheme,
                    host,
                    port,
                    path,
                    status,
                    bytesOut,
                    bytesIn,
                    durationMs,
                    tls,
                    client,
                    resolvedIp,
                    error,
                    firstBytesSha256,
                    sessionDetails,
                    redactions,
                    mcp,
                    websocket,
                    exec,
                    file,
                    gap);
        }

        public Builder sessionDetails(SessionDetails value) {
            sessionDetails = value;
            return this;
        }
    }
}
