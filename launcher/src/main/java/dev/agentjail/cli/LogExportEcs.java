package dev.agentjail.cli;

import static dev.agentjail.cli.LogExportMapping.put;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Maps an audit record to an Elastic Common Schema document (field mapping: docs/audit-export.md). Every kind of record
 * is exported; what ECS has no field for goes under the custom {@code agentjail.*} namespace.
 */
final class LogExportEcs {
    static final String ECS_VERSION = "8.11.0";
    static final String DATASET = "agentjail.audit";
    static final String PRODUCT = "agentjail";

    private static final Pattern ARGUMENT_COUNT = Pattern.compile("\\((\\d{1,9}) arguments?\\)");

    private LogExportEcs() {}

    static Map<String, Object> map(LogRecord r) {
        Map<String, Object> doc = new LinkedHashMap<>();
        put(doc, "@timestamp", LogRecordText.time(r.ts()));
        put(doc, "ecs.version", ECS_VERSION);
        put(doc, "event.kind", "event");
        put(doc, "event.category", categories(r));
        put(doc, "event.type", types(r));
        put(doc, "event.action", r.kind());
        put(doc, "event.outcome", outcome(r));
        put(doc, "event.reason", r.reason());
        // ECS wants nanoseconds; a duration too long for them (292 years) saturates.
        put(
                doc,
                "event.duration",
                r.durationMs() > Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : r.durationMs() * 1_000_000L);
        put(doc, "event.dataset", DATASET);
        put(doc, "event.module", PRODUCT);
        put(doc, "event.sequence", r.seq().isPresent() ? r.seq().getAsLong() : null);
        put(doc, "observer.vendor", PRODUCT);
        put(doc, "observer.product", PRODUCT);
        put(doc, "observer.type", "proxy");
        put(doc, "rule.id", LogExportMapping.rule(r));
        put(doc, "http.request.method", r.method());
        put(doc, "http.response.status_code", r.status() > 0 ? (long) r.status() : null);
        if (!"CONNECT".equals(r.method())) {
            // A CONNECT names an authority, not a URL: destination.* holds it.
            put(doc, "url.scheme", r.scheme());
            put(doc, "url.domain", r.host());
            put(doc, "url.port", r.port() > 0 && r.host() != null ? (long) r.port() : null);
            put(doc, "url.path", r.path());
            put(doc, "url.full", LogExportMapping.url(r));
        }
        LogExportMapping.Endpoint source = LogExportMapping.Endpoint.parse(r.client());
        put(doc, "source.address", r.client());
        put(doc, "source.ip", source.ip());
        put(doc, "source.port", source.port() == null ? null : source.port().longValue());
        String hostIp = LogExportMapping.ipLiteral(r.host());
        put(doc, "destination.address", r.host());
        put(doc, "destination.domain", hostIp == null ? r.host() : null);
        put(doc, "destination.ip", r.resolvedIp() != null ? LogExportMapping.ipLiteral(r.resolvedIp()) : hostIp);
        put(doc, "destination.port", r.port() > 0 ? (long) r.port() : null);
        if (r.isRequest() || LogRecord.TUNNEL_CLOSE.equals(r.kind())) {
            put(doc, "source.bytes", r.bytesOut());
            put(doc, "destination.bytes", r.bytesIn());
            put(doc, "network.bytes", r.bytesOut() + r.bytesIn());
            put(doc, "network.protocol", "http");
        }
        put(doc, "error.message", r.error());
        put(doc, "agentjail.session", r.sessionId());
        put(doc, "agentjail.tls", r.tls());
        put(doc, "agentjail.first_bytes_sha256", r.firstBytesSha256());
        if (!r.redactions().isEmpty()) {
            put(doc, "agentjail.redactions", LogExportMapping.redactions(r));
        }
        if (r.mcp() != null) {
            put(doc, "agentjail.mcp.server", r.mcp().server());
            put(doc, "agentjail.mcp.method", r.mcp().method());
            put(doc, "agentjail.mcp.tool", r.mcp().tool());
        }
        if (r.isWebSocket()) {
            put(doc, "agentjail.websocket.messages_out", r.websocket().messagesOut());
            put(doc, "agentjail.websocket.messages_in", r.websocket().messagesIn());
        }
        LogRecord.SessionInfo s = r.sessionInfo();
        if (s != null) {
            put(doc, "agentjail.policy.sha256", s.policySha256());
            put(doc, "agentjail.policy.source", s.policySource());
            if (s.command() != null && !s.command().isEmpty()) {
                put(doc, "process.name", s.command().get(0));
                put(doc, "process.args_count", argumentCount(s.command()));
            }
            put(doc, "agentjail.binds", s.binds());
            put(doc, "agentjail.env_names", s.envNames());
            put(doc, "process.exit_code", s.exitCode());
            put(doc, "agentjail.requests", s.requests());
            put(doc, "agentjail.denials", s.denials());
            put(doc, "agentjail.limits", s.limits());
            put(doc, "agentjail.limit_hits", s.limitHits());
        }
        return doc;
    }

    private static List<String> categories(LogRecord r) {
        return switch (r.kind()) {
            case LogRecord.REQUEST -> List.of("network", "web");
            case LogRecord.SESSION_START, LogRecord.SESSION_END -> List.of("session");
            default -> List.of("network");
        };
    }

    private static List<String> types(LogRecord r) {
        return switch (r.kind()) {
            case LogRecord.REQUEST ->
                r.isAllowed()
                        ? List.of("access", "allowed")
                        : r.isDenied() ? List.of("access", "denied") : List.of("error");
            case LogRecord.TUNNEL_CLOSE -> List.of("connection", "end");
            case LogRecord.SESSION_START -> List.of("start");
            case LogRecord.SESSION_END -> List.of("end");
            default -> List.of("info");
        };
    }

    private static String outcome(LogRecord r) {
        if (LogRecord.SESSION_END.equals(r.kind()) && r.sessionInfo() != null) {
            Long exit = r.sessionInfo().exitCode();
            return exit == null ? null : exit == 0 ? "success" : "failure";
        }
        if (r.decision() == null) {
            return null;
        }
        return r.isAllowed() ? "success" : "failure";
    }

    /**
     * ECS counts the program among {@code process.args}: N + 1 for {@code [program, "(N arguments)"]}, the way the
     * session-start record describes a command without its arguments.
     */
    private static Long argumentCount(List<String> command) {
        if (command.size() < 2) {
            return null;
        }
        Matcher m = ARGUMENT_COUNT.matcher(command.get(1));
        return m.matches() ? Long.parseLong(m.group(1)) + 1 : null;
    }
}
