package dev.agentjail.cli;

import static dev.agentjail.cli.LogExportMapping.put;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Maps an audit record to an OCSF 1.3.0 HTTP Activity event (class_uid 4002; field mapping: docs/audit-export.md).
 * Only {@code request} and {@code tunnel-close} records are HTTP activity; session records map to {@code null}.
 * What OCSF has no attribute for goes under {@code unmapped}.
 */
final class LogExportOcsf {
    static final String OCSF_VERSION = "1.3.0";
    static final int CATEGORY_UID = 4;
    static final int CLASS_UID = 4002;
    static final int SEVERITY_INFORMATIONAL = 1;
    static final int SEVERITY_LOW = 2;
    static final int SEVERITY_MEDIUM = 3;

    private LogExportOcsf() {}

    /** The event for {@code r}, or {@code null} when the record is no HTTP activity (session records). */
    static Map<String, Object> map(LogRecord r) {
        if (!r.isRequest() && !LogRecord.TUNNEL_CLOSE.equals(r.kind())) {
            return null;
        }
        Map<String, Object> e = new LinkedHashMap<>();
        int activity = activityId(r.method());
        put(e, "activity_id", activity);
        put(e, "activity_name", activity == 99 ? r.method() : activityName(activity));
        put(e, "category_uid", CATEGORY_UID);
        put(e, "category_name", "Network Activity");
        put(e, "class_uid", CLASS_UID);
        put(e, "class_name", "HTTP Activity");
        put(e, "type_uid", (long) CLASS_UID * 100 + activity);
        put(e, "type_name", "HTTP Activity: " + activityName(activity));
        int severity = severity(r);
        put(e, "severity_id", severity);
        put(e, "severity", severityName(severity));
        put(e, "time", r.ts().toEpochMilli());
        put(e, "duration", r.durationMs());
        if (r.decision() != null) {
            boolean allowed = r.isAllowed();
            put(e, "status_id", allowed ? 1 : 2);
            put(e, "status", allowed ? "Success" : "Failure");
            put(e, "action_id", allowed ? 1 : r.isDenied() ? 2 : 0);
            put(e, "action", allowed ? "Allowed" : r.isDenied() ? "Denied" : "Unknown");
            put(e, "disposition_id", allowed ? 1 : r.isDenied() ? 2 : 0);
            put(e, "disposition", allowed ? "Allowed" : r.isDenied() ? "Blocked" : "Unknown");
        }
        put(e, "status_code", r.reason());
        put(e, "status_detail", r.error());
        put(e, "metadata.version", OCSF_VERSION);
        put(e, "metadata.product.name", LogExportEcs.PRODUCT);
        put(e, "metadata.product.vendor_name", LogExportEcs.PRODUCT);
        put(e, "metadata.event_code", r.kind());
        put(e, "metadata.correlation_uid", r.sessionId());
        put(e, "metadata.sequence", r.seq().isPresent() ? r.seq().getAsLong() : null);
        put(e, "firewall_rule.uid", LogExportMapping.rule(r));
        LogExportMapping.Endpoint source = LogExportMapping.Endpoint.parse(r.client());
        put(e, "src_endpoint.ip", source.ip());
        put(e, "src_endpoint.port", source.port());
        String hostIp = LogExportMapping.ipLiteral(r.host());
        put(e, "dst_endpoint.hostname", hostIp == null ? r.host() : null);
        put(e, "dst_endpoint.ip", r.resolvedIp() != null ? LogExportMapping.ipLiteral(r.resolvedIp()) : hostIp);
        put(e, "dst_endpoint.port", r.port() > 0 ? r.port() : null);
        put(e, "http_request.http_method", r.method());
        if (!"CONNECT".equals(r.method()) && (r.host() != null || r.path() != null)) {
            // A CONNECT names an authority, not a URL: dst_endpoint holds it.
            put(e, "http_request.url.scheme", r.scheme());
            put(e, "http_request.url.hostname", r.host());
            put(e, "http_request.url.port", r.port() > 0 && r.host() != null ? r.port() : null);
            put(e, "http_request.url.path", r.path());
            put(e, "http_request.url.url_string", LogExportMapping.url(r));
        }
        if (r.status() > 0) {
            put(e, "http_response.code", r.status());
        } else if (!e.containsKey("http_request")) {
            // The class needs one of the two; a record of bytes that never formed a request has neither.
            e.put("http_request", new LinkedHashMap<>());
        }
        put(e, "traffic.bytes_out", r.bytesOut());
        put(e, "traffic.bytes_in", r.bytesIn());
        put(e, "traffic.bytes", r.bytesOut() + r.bytesIn());
        put(e, "unmapped.tls", r.tls());
        put(e, "unmapped.first_bytes_sha256", r.firstBytesSha256());
        if (!r.redactions().isEmpty()) {
            put(e, "unmapped.redactions", LogExportMapping.redactions(r));
        }
        if (r.mcp() != null) {
            put(e, "unmapped.mcp.server", r.mcp().server());
            put(e, "unmapped.mcp.method", r.mcp().method());
            put(e, "unmapped.mcp.tool", r.mcp().tool());
        }
        if (r.isWebSocket()) {
            put(e, "unmapped.websocket.messages_out", r.websocket().messagesOut());
            put(e, "unmapped.websocket.messages_in", r.websocket().messagesIn());
        }
        return e;
    }

    /** OCSF's HTTP methods; another method is 99 (Other, named in activity_name), no method 0 (Unknown). */
    static int activityId(String method) {
        if (method == null) {
            return 0;
        }
        return switch (method) {
            case "CONNECT" -> 1;
            case "DELETE" -> 2;
            case "GET" -> 3;
            case "HEAD" -> 4;
            case "OPTIONS" -> 5;
            case "POST" -> 6;
            case "PUT" -> 7;
            case "TRACE" -> 8;
            default -> 99;
        };
    }

    private static String activityName(int id) {
        return switch (id) {
            case 1 -> "Connect";
            case 2 -> "Delete";
            case 3 -> "Get";
            case 4 -> "Head";
            case 5 -> "Options";
            case 6 -> "Post";
            case 7 -> "Put";
            case 8 -> "Trace";
            case 99 -> "Other";
            default -> "Unknown";
        };
    }

    /** Medium for a denial or a secret found, Low for an error, Informational otherwise. */
    static int severity(LogRecord r) {
        if (r.isDenied() || r.redactionCount() > 0) {
            return SEVERITY_MEDIUM;
        }
        return r.isError() ? SEVERITY_LOW : SEVERITY_INFORMATIONAL;
    }

    private static String severityName(int id) {
        return switch (id) {
            case SEVERITY_MEDIUM -> "Medium";
            case SEVERITY_LOW -> "Low";
            default -> "Informational";
        };
    }
}
