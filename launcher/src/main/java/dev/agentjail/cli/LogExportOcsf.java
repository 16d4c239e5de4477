package dev.agentjail.cli;

import static dev.agentjail.cli.LogExportMapping.put;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Maps an audit record to an OCSF 1.3.0 event (field mapping: docs/audit-export.md): {@code request} and {@code
 * tunnel-close} records to HTTP Activity (class_uid 4002), {@code exec} records to Process Activity (1007, Launch),
 * {@code file} records to File System Activity (1001). Session and audit-gap records have no such class and map to
 * {@code null}. What OCSF has no attribute for goes under {@code unmapped}.
 */
final class LogExportOcsf {
    static final String OCSF_VERSION = "1.3.0";
    static final int CATEGORY_UID = 4;
    static final int CLASS_UID = 4002;
    static final int SEVERITY_INFORMATIONAL = 1;
    static final int SEVERITY_LOW = 2;
    static final int SEVERITY_MEDIUM = 3;
    static final int SYSTEM_CATEGORY_UID = 1;
    static final int PROCESS_CLASS_UID = 1007;
    static final int FILE_CLASS_UID = 1001;
    static final int LAUNCH = 1;
    static final int FILE_CREATE = 1;
    static final int FILE_UPDATE = 3;
    static final int FILE_DELETE = 4;
    static final int FILE_RENAME = 5;
    static final int FILE_SET_ATTRIBUTES = 6;
    static final int FILE_OTHER = 99;
    static final int FILE_SET_SECURITY = 7;

    /** OCSF file {@code type_id}s. */
    static final int TYPE_UNKNOWN = 0;

    static final int TYPE_REGULAR = 1;
    static final int TYPE_FOLDER = 2;
    static final int TYPE_SYMLINK = 7;
    static final int DEVICE_OTHER = 99;

    /** The device of exec and file events: the session's jail ({@code device.uid} is the session). */
    static final String DEVICE_NAME = "agentjail jail";

    private LogExportOcsf() {}

    /** The event for {@code r}, or {@code null} when OCSF has no class for it here (session and audit-gap records). */
    static Map<String, Object> map(LogRecord r) {
        if (r.isExec()) {
            return process(r);
        }
        if (r.isFile()) {
            return fileSystem(r);
        }
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

    /**
     * A program the jail started: Process Activity, Launch. The launched process is {@code process} (its executable
     * as {@code process.file}, its parent and user), the parent that started it the {@code actor}.
     */
    private static Map<String, Object> process(LogRecord r) {
        LogRecord.Exec x = r.exec();
        Map<String, Object> e = system(r, PROCESS_CLASS_UID, "Process Activity", LAUNCH, "Launch");
        put(e, "process.pid", x.pid());
        put(e, "process.cmd_line", String.join(" ", x.argv()));
        put(e, "process.name", LogExportMapping.baseName(x.path()));
        put(e, "process.file.name", LogExportMapping.baseName(x.path()));
        put(e, "process.file.path", x.path());
        put(e, "process.file.type_id", TYPE_REGULAR);
        put(e, "process.parent_process.pid", x.ppid());
        put(e, "process.user.uid", Long.toString(x.uid()));
        put(e, "actor.process.pid", x.ppid());
        put(e, "actor.user.uid", Long.toString(x.uid()));
        device(e, r);
        put(e, "unmapped.argv", x.argv());
        put(e, "unmapped.cwd", x.cwd());
        if (x.argvTruncated()) {
            put(e, "unmapped.argv_truncated", true);
        }
        if (x.racy()) {
            put(e, "unmapped.racy", true);
        }
        if (x.missing()) {
            // A PATH search's miss: the launch failed (the program's file was not there), nothing ran.
            put(e, "status_id", 2);
            put(e, "status", "Failure");
            put(e, "status_detail", "the program's file was not there (missing)");
            put(e, "unmapped.missing", true);
        }
        if (x.commands() > 1) {
            put(e, "unmapped.commands", x.commands());
        }
        if (x.escaped()) {
            put(e, "unmapped.escaped", true);
        }
        if (!r.redactions().isEmpty()) {
            put(e, "unmapped.redactions", LogExportMapping.redactions(r));
        }
        return e;
    }

    /**
     * A change to the jail's files: File System Activity. The path changed is {@code file}; a rename's new name is
     * {@code file_result}; a link's existing file and a symbolic link's text are {@code unmapped.target}.
     */
    private static Map<String, Object> fileSystem(LogRecord r) {
        LogRecord.FileChange f = r.file();
        int activity = fileActivityId(f.op());
        Map<String, Object> e = system(r, FILE_CLASS_UID, "File System Activity", activity, fileActivityName(activity));
        put(e, "file.name", LogExportMapping.baseName(f.path()));
        put(e, "file.path", f.path());
        put(e, "file.type_id", fileTypeId(f));
        if ("rename".equals(f.op()) && f.target() != null) {
            put(e, "file_result.name", LogExportMapping.baseName(f.target()));
            put(e, "file_result.path", f.target());
            put(e, "file_result.type_id", TYPE_UNKNOWN);
        } else {
            put(e, "unmapped.target", f.target());
        }
        put(e, "actor.process.pid", f.pid());
        device(e, r);
        put(e, "unmapped.operation", f.op());
        if (!f.flags().isEmpty()) {
            put(e, "unmapped.flags", f.flags());
        }
        if (f.paths() > 1) {
            put(e, "unmapped.paths", f.paths());
        }
        if (f.racy()) {
            put(e, "unmapped.racy", true);
        }
        if (f.escaped()) {
            put(e, "unmapped.escaped", true);
        }
        return e;
    }

    /** What every System Activity event here starts with; {@code count} is how many events the record stands for. */
    private static Map<String, Object> system(LogRecord r, int classUid, String className, int activity, String name) {
        Map<String, Object> e = new LinkedHashMap<>();
        put(e, "activity_id", activity);
        put(e, "activity_name", name);
        put(e, "category_uid", SYSTEM_CATEGORY_UID);
        put(e, "category_name", "System Activity");
        put(e, "class_uid", classUid);
        put(e, "class_name", className);
        put(e, "type_uid", (long) classUid * 100 + activity);
        put(e, "type_name", className + ": " + name);
        int severity = severity(r);
        put(e, "severity_id", severity);
        put(e, "severity", severityName(severity));
        put(e, "time", r.ts().toEpochMilli());
        put(e, "count", r.isExec() ? r.exec().count() : r.file().count());
        put(e, "metadata.version", OCSF_VERSION);
        put(e, "metadata.product.name", LogExportEcs.PRODUCT);
        put(e, "metadata.product.vendor_name", LogExportEcs.PRODUCT);
        put(e, "metadata.event_code", r.kind());
        put(e, "metadata.correlation_uid", r.sessionId());
        put(e, "metadata.sequence", r.seq().isPresent() ? r.seq().getAsLong() : null);
        return e;
    }

    /** The device System Activity requires: the session's jail, named by the session. */
    private static void device(Map<String, Object> e, LogRecord r) {
        put(e, "device.type_id", DEVICE_OTHER);
        put(e, "device.type", "Other");
        put(e, "device.name", DEVICE_NAME);
        put(e, "device.uid", r.sessionId());
    }

    /**
     * A file operation's activity: what makes a name Create, what removes one Delete, rename Rename, a write or a
     * truncation Update, permissions and owner Set Security, times and extended attributes Set Attributes.
     */
    static int fileActivityId(String op) {
        return switch (op) {
            case "mkdir", "link", "symlink", "mknod" -> FILE_CREATE;
            case "unlink", "rmdir" -> FILE_DELETE;
            case "rename" -> FILE_RENAME;
            case "chmod", "chown" -> FILE_SET_SECURITY;
            case "utime", "xattr" -> FILE_SET_ATTRIBUTES;
            // A Unix socket bound to an abstract name: no file at all.
            case "bind" -> FILE_OTHER;
            default -> FILE_UPDATE;
        };
    }

    private static String fileActivityName(int id) {
        return switch (id) {
            case FILE_CREATE -> "Create";
            case FILE_DELETE -> "Delete";
            case FILE_RENAME -> "Rename";
            case FILE_SET_SECURITY -> "Set Security";
            case FILE_SET_ATTRIBUTES -> "Set Attributes";
            case FILE_OTHER -> "Other";
            default -> "Update";
        };
    }

    /** A directory made or removed, a symbolic link made, a file truncated; unknown for the rest and folded records. */
    private static int fileTypeId(LogRecord.FileChange f) {
        if (f.folded()) {
            return TYPE_UNKNOWN;
        }
        return switch (f.op()) {
            case "mkdir", "rmdir" -> TYPE_FOLDER;
            case "symlink" -> TYPE_SYMLINK;
            case "truncate" -> TYPE_REGULAR;
            default -> TYPE_UNKNOWN;
        };
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
