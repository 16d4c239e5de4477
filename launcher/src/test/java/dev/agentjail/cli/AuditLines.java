package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import java.time.Instant;

/**
 * Request records as the proxy writes them (its own {@link AuditRecord} and {@link AuditJson}), one JSON line each:
 * the audit logs of the tests of commands that read logs, written with {@code Files.write(log, lines)}.
 */
final class AuditLines {
    static final Instant TS = Instant.parse("2026-11-30T10:00:00Z");
    static final String SESSION = "abc123";

    private AuditLines() {}

    /** A request of session {@value #SESSION}; a CONNECT is https, anything else plain http. */
    static String request(String host, int port, String method, String decision, String reason) {
        return request(builder(host, port, method, decision, reason));
    }

    /** A request of {@code session} that was dialled at {@code resolvedIp} (may be {@code null}). */
    static String request(
            String session, String host, int port, String method, String decision, String reason, String resolvedIp) {
        return request(
                builder(host, port, method, decision, reason).session(session).resolvedIp(resolvedIp));
    }

    private static AuditRecord.Builder builder(String host, int port, String method, String decision, String reason) {
        return AuditRecord.builder()
                .kind(AuditRecord.KIND_REQUEST)
                .ts(TS)
                .session(SESSION)
                .decision(decision)
                .reason(reason)
                .rule("-")
                .method(method)
                .scheme(method.equals("CONNECT") ? "https" : "http")
                .host(host)
                .port(port)
                .path("/")
                .status(decision.equals(AuditRecord.DENY) ? 403 : 200)
                .tls(AuditRecord.TLS_NONE)
                .client("127.0.0.1:1");
    }

    /** Without the line break the codec ends a line with: {@code Files.write} adds one per line. */
    private static String request(AuditRecord.Builder builder) {
        return AuditJson.toLine(builder.build()).stripTrailing();
    }
}
