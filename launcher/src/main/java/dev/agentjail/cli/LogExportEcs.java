package dev.agentjail.cli;

import static dev.agentjail.cli.LogExportMapping.put;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Maps an audit record to an Elastic Common Schema document (field mapping: docs/audit-export.md). Every kind of record
 * is exported: requests as {@code http.*}, {@code url.*}, {@code source.*} and {@code destination.*}, programs the
 * jail ran as {@code process.*}, changes to its files as {@code file.*}; what ECS has no field for goes under the
 * custom {@code agentjail.*} namespace.
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
        put(doc, "event.action", r.isFile() ? r.file().op() : r.kind());
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
        if (r.isExec()) {
            exec(doc, r.exec());
        }
        if (r.isFile()) {
            file(doc, r.file());
        }
        if (r.isAuditGap()) {
            put(doc, "agentjail.gap.missed", r.gap().missed());
            put(doc, "agentjail.gap.stopped", r.gap().stopped());
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
            put(doc, "agentjail.programs", s.programs());
            put(doc, "agentjail.files_changed", s.filesChanged());
        }
        return doc;
    }

    /** A program the jail started: ECS {@code process.*} and {@code user.id}; the rest under {@code agentjail.*}. */
    private static void exec(Map<String, Object> doc, LogRecord.Exec e) {
        put(doc, "process.executable", e.path());
        put(doc, "process.name", LogExportMapping.baseName(e.path()));
        put(doc, "process.args", e.argv());
        put(doc, "process.args_count", (long) e.argv().size());
        put(doc, "process.pid", e.pid());
        put(doc, "process.parent.pid", e.ppid());
        put(doc, "process.working_directory", e.cwd());
        put(doc, "user.id", Long.toString(e.uid()));
        put(doc, "agentjail.count", e.count());
        if (e.argvTruncated()) {
            put(doc, "agentjail.argv_truncated", true);
        }
        if (e.racy()) {
            put(doc, "agentjail.racy", true);
        }
        if (e.missing()) {
            put(doc, "agentjail.missing", true);
        }
        if (e.commands() > 1) {
            put(doc, "agentjail.commands", e.commands());
        }
        if (e.escaped()) {
            put(doc, "agentjail.escaped", true);
        }
    }

    /**
     * A change to the jail's files: ECS {@code file.*} and {@code process.pid}; {@code file.target_path} is the new
     * name of a rename, the existing file of a link and the text of a symbolic link.
     */
    private static void file(Map<String, Object> doc, LogRecord.FileChange f) {
        put(doc, "file.path", f.path());
        if (!f.folded()) {
            put(doc, "file.name", LogExportMapping.baseName(f.path()));
        }
        put(doc, "file.target_path", f.target());
        put(doc, "file.type", fileType(f.op()));
        put(doc, "process.pid", f.pid());
        put(doc, "agentjail.count", f.count());
        if (!f.flags().isEmpty()) {
            put(doc, "agentjail.file.flags", f.flags());
        }
        if (f.paths() > 1) {
            put(doc, "agentjail.file.paths", f.paths());
        }
        if (f.racy()) {
            put(doc, "agentjail.racy", true);
        }
        if (f.escaped()) {
            put(doc, "agentjail.escaped", true);
        }
    }

    /** ECS {@code file.type} where the operation tells it: a directory made or removed, a symbolic link made. */
    private static String fileType(String op) {
        return switch (op) {
            case "mkdir", "rmdir" -> "dir";
            case "symlink" -> "symlink";
            default -> null;
        };
    }

    /** ECS {@code event.type} of a file operation: what it makes, removes, or changes. */
    static String fileEventType(String op) {
        return switch (op) {
            case "mkdir", "link", "symlink", "mknod" -> "creation";
            case "unlink", "rmdir" -> "deletion";
            case "bind" -> "info";
            default -> "change";
        };
    }

    private static List<String> categories(LogRecord r) {
        return switch (r.kind()) {
            case LogRecord.REQUEST -> List.of("network", "web");
            case LogRecord.SESSION_START, LogRecord.SESSION_END -> List.of("session");
            case LogRecord.EXEC -> List.of("process");
            case LogRecord.FILE -> List.of("file");
            case LogRecord.AUDIT_GAP -> List.of("process", "file");
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
            case LogRecord.EXEC -> List.of("start");
            case LogRecord.FILE -> List.of(fileEventType(r.file().op()));
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
