package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogExportTest {
    static final LogExportFieldList ECS = LogExportFieldList.load("ecs-fields.txt");
    static final LogExportFieldList OCSF = LogExportFieldList.load("ocsf-http-activity-fields.txt");
    static final LogExportFieldList OCSF_PROCESS = LogExportFieldList.load("ocsf-process-activity-fields.txt");
    static final LogExportFieldList OCSF_FILE = LogExportFieldList.load("ocsf-file-system-activity-fields.txt");

    @TempDir
    Path dir;

    @Test
    void everyEcsDocumentUsesOnlyListedFieldsOfTheirTypes() throws Exception {
        Path log = LogReaderTestCli.resource(LogTailTest.SAMPLE);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "export", "--format", "ecs", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        List<Map<String, Object>> docs = parseLines(r.out());
        assertEquals(16, docs.size(), "every valid record, of every kind");
        for (Map<String, Object> doc : docs) {
            assertEquals(List.of(), ECS.problems(doc), () -> LogRecordJson.write(doc));
        }
        Map<String, Object> ssrf = docs.get(3);
        assertEquals("2026-11-30T09:44:09.000Z", ssrf.get("@timestamp"));
        assertEquals(List.of("access", "denied"), at(ssrf, "event.type"));
        assertEquals("failure", at(ssrf, "event.outcome"));
        assertEquals("ssrf-link-local", at(ssrf, "event.reason"));
        assertEquals("169.254.169.254", at(ssrf, "destination.ip"));
        assertEquals("metadata.allowed.test", at(ssrf, "destination.domain"));
        assertEquals("http://metadata.allowed.test/latest/meta-data/", at(ssrf, "url.full"));
        assertEquals(3_000_000L, at(ssrf, "event.duration"), "milliseconds become nanoseconds");
        assertNull(at(ssrf, "rule.id"), "\"-\" means no rule");
        assertEquals("127.0.0.1", at(ssrf, "source.ip"));
        assertEquals(51240L, at(ssrf, "source.port"));

        Map<String, Object> start = docs.get(0);
        assertEquals(List.of("session"), at(start, "event.category"));
        assertEquals("claude", at(start, "process.name"));
        assertEquals(3L, at(start, "process.args_count"), "the program and its 2 arguments");
        Map<String, Object> mcp = docs.get(5);
        assertEquals("create_issue", at(mcp, "agentjail.mcp.tool"));
        Map<String, Object> chained = docs.get(11);
        assertEquals(12L, at(chained, "event.sequence"));
        Map<String, Object> ipv6 = docs.get(14);
        assertEquals("::1", at(ipv6, "source.ip"));
        assertEquals("2001:db8::10", at(ipv6, "destination.ip"));
        assertEquals(0L, at(docs.get(15), "process.exit_code"));
        assertEquals("success", at(docs.get(15), "event.outcome"));
    }

    @Test
    void everyOcsfEventIsAnHttpActivityWithListedAttributesOfTheirTypes() throws Exception {
        Path log = LogReaderTestCli.resource(LogTailTest.SAMPLE);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "export", "--format", "ocsf", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        assertTrue(r.err().contains("2 record(s) other than request, tunnel-close, exec and file"), r.err());
        List<Map<String, Object>> events = parseLines(r.out());
        assertEquals(14, events.size(), "13 requests and 1 tunnel-close");
        for (Map<String, Object> e : events) {
            assertEquals(List.of(), OCSF.problems(e), () -> LogRecordJson.write(e));
            long classUid = (Long) e.get("class_uid");
            long activity = (Long) e.get("activity_id");
            assertEquals(classUid * 100 + activity, e.get("type_uid"), "type_uid = class_uid * 100 + activity_id");
        }
        Map<String, Object> connect = events.get(0);
        assertEquals(1L, connect.get("activity_id"));
        assertEquals("HTTP Activity: Connect", connect.get("type_name"));
        assertNull(at(connect, "http_request.url"), "a CONNECT names an authority, not a URL");
        assertEquals(443L, at(connect, "dst_endpoint.port"));
        assertEquals(1_796_031_847_123L, connect.get("time"), "milliseconds since the epoch");
        assertEquals("1.3.0", at(connect, "metadata.version"));
        assertEquals("a1b2c3d4e5f60718", at(connect, "metadata.correlation_uid"));

        Map<String, Object> ssrf = events.get(2);
        assertEquals(2L, ssrf.get("action_id"));
        assertEquals(2L, ssrf.get("disposition_id"));
        assertEquals(2L, ssrf.get("status_id"));
        assertEquals(3L, ssrf.get("severity_id"));
        assertEquals("ssrf-link-local", ssrf.get("status_code"));
        assertEquals("169.254.169.254", at(ssrf, "dst_endpoint.ip"));
        assertEquals("http://metadata.allowed.test/latest/meta-data/", at(ssrf, "http_request.url.url_string"));
        assertEquals(403L, at(ssrf, "http_response.code"));

        Map<String, Object> tunnelClose = events.get(8);
        assertEquals("tunnel-close", at(tunnelClose, "metadata.event_code"));
        assertEquals(2_001_000L, at(tunnelClose, "traffic.bytes"));

        Map<String, Object> malformed = events.get(9);
        assertEquals(0L, malformed.get("activity_id"), "no method: Unknown");
        assertEquals(0L, malformed.get("action_id"));
        assertEquals("bare LF in the request head", malformed.get("status_detail"));
        assertEquals(400L, at(malformed, "http_response.code"));

        assertEquals(
                "http://evil.test/a%1B%5B31mred%E2%80%AEevil",
                at(events.get(11), "http_request.url.url_string"), "a URL holds no raw control or bidi character");
        assertEquals("/a\u001b[31mred\u202eevil", at(events.get(11), "http_request.url.path"), "the path as logged");

        Map<String, Object> redacted = events.get(12);
        assertEquals(
                List.of(
                        Map.of("kind", "known:API_KEY", "location", "header:authorization", "count", 2L),
                        Map.of("kind", "github-pat", "location", "body", "count", 1L)),
                at(redacted, "unmapped.redactions"));
    }

    @Test
    void programsAndFileChangesAreEcsProcessAndFileEvents() throws Exception {
        Path log = LogReaderTestCli.resource(LogTailTest.JAIL);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "export", "--format", "ecs", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        List<Map<String, Object>> docs = parseLines(r.out());
        assertEquals(21, docs.size(), "every record");
        for (Map<String, Object> doc : docs) {
            assertEquals(List.of(), ECS.problems(doc), () -> LogRecordJson.write(doc));
        }
        Map<String, Object> mv = docs.get(3);
        assertEquals(List.of("process"), at(mv, "event.category"));
        assertEquals(List.of("start"), at(mv, "event.type"));
        assertEquals("exec", at(mv, "event.action"));
        assertEquals("/usr/bin/mv", at(mv, "process.executable"));
        assertEquals("mv", at(mv, "process.name"));
        assertEquals(List.of("mv", "a", "b"), at(mv, "process.args"));
        assertEquals(3L, at(mv, "process.args_count"));
        assertEquals(7L, at(mv, "process.pid"));
        assertEquals(1L, at(mv, "process.parent.pid"));
        assertEquals("/home/u/proj", at(mv, "process.working_directory"));
        assertEquals("1000", at(mv, "user.id"));
        assertEquals(1L, at(mv, "agentjail.count"));
        assertNull(at(mv, "event.sequence"), "the count is no sequence number");
        assertEquals(3L, at(docs.get(9), "agentjail.count"), "a record of three starts");

        Map<String, Object> rename = docs.get(4);
        assertEquals(List.of("file"), at(rename, "event.category"));
        assertEquals(List.of("change"), at(rename, "event.type"));
        assertEquals("rename", at(rename, "event.action"));
        assertEquals("a", at(rename, "file.path"));
        assertEquals("b", at(rename, "file.target_path"));
        assertEquals(7L, at(rename, "process.pid"));
        Map<String, Object> symlink = docs.get(6);
        assertEquals(List.of("creation"), at(symlink, "event.type"));
        assertEquals("symlink", at(symlink, "file.type"));
        assertEquals("x", at(symlink, "file.target_path"));
        Map<String, Object> folded = docs.get(10);
        assertEquals("build/", at(folded, "file.path"));
        assertNull(at(folded, "file.name"), "a folded record names a directory, not a file");
        assertEquals(40L, at(folded, "agentjail.file.paths"));
        assertEquals(120L, at(folded, "agentjail.count"));
        assertEquals(List.of("create", "truncate"), at(folded, "agentjail.file.flags"));
        assertEquals(List.of("deletion"), at(docs.get(18), "event.type"), "rmdir");
        assertEquals(List.of("deletion"), at(docs.get(14), "event.type"), "unlink");

        Map<String, Object> gap = docs.get(19);
        assertEquals("audit-gap", at(gap, "event.action"));
        assertEquals("audit-supervisor-behind", at(gap, "event.reason"));
        assertEquals(12L, at(gap, "agentjail.gap.missed"));
        assertEquals(false, at(gap, "agentjail.gap.stopped"));
        assertEquals(7L, at(docs.get(20), "agentjail.programs"));
        assertEquals(9L, at(docs.get(20), "agentjail.files_changed"));
    }

    @Test
    void programsAndFileChangesAreOcsfProcessAndFileSystemActivity() throws Exception {
        Path log = LogReaderTestCli.resource(LogTailTest.JAIL);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "export", "--format", "ocsf", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        assertTrue(r.err().contains("3 record(s) other than request, tunnel-close, exec and file"), r.err());
        List<Map<String, Object>> events = parseLines(r.out());
        assertEquals(18, events.size(), "6 exec, 11 file, 1 request");
        for (Map<String, Object> e : events) {
            long classUid = (Long) e.get("class_uid");
            LogExportFieldList list = switch ((int) classUid) {
                case 1007 -> OCSF_PROCESS;
                case 1001 -> OCSF_FILE;
                default -> OCSF;
            };
            assertEquals(List.of(), list.problems(e), () -> LogRecordJson.write(e));
            assertEquals(classUid * 100 + (Long) e.get("activity_id"), e.get("type_uid"));
        }
        Map<String, Object> mv = events.get(2);
        assertEquals(1007L, mv.get("class_uid"));
        assertEquals(1L, mv.get("category_uid"));
        assertEquals(1L, mv.get("activity_id"), "Launch");
        assertEquals(100701L, mv.get("type_uid"));
        assertEquals("Process Activity: Launch", mv.get("type_name"));
        assertEquals("/usr/bin/mv", at(mv, "process.file.path"));
        assertEquals("mv", at(mv, "process.file.name"));
        assertEquals("mv a b", at(mv, "process.cmd_line"));
        assertEquals(7L, at(mv, "process.pid"));
        assertEquals(1L, at(mv, "process.parent_process.pid"));
        assertEquals(1L, at(mv, "actor.process.pid"), "the parent started it");
        assertEquals("1000", at(mv, "actor.user.uid"));
        assertEquals("/home/u/proj", at(mv, "unmapped.cwd"));
        assertEquals("c0ffee0123456789", at(mv, "device.uid"));
        assertEquals(3L, events.get(8).get("count"), "a record of three starts");

        Map<String, Object> rename = events.get(3);
        assertEquals(1001L, rename.get("class_uid"));
        assertEquals(5L, rename.get("activity_id"), "Rename");
        assertEquals(100105L, rename.get("type_uid"));
        assertEquals("a", at(rename, "file.path"));
        assertEquals("b", at(rename, "file_result.path"));
        assertEquals(7L, at(rename, "actor.process.pid"));
        Map<String, Object> write = events.get(1);
        assertEquals(3L, write.get("activity_id"), "Update");
        assertEquals(List.of("create", "truncate"), at(write, "unmapped.flags"));
        assertEquals(1L, events.get(5).get("activity_id"), "a symbolic link made: Create");
        assertEquals(7L, at(events.get(5), "file.type_id"), "Symbolic Link");
        assertEquals("x", at(events.get(5), "unmapped.target"));
        assertEquals(2L, at(events.get(11), "file.type_id"), "mkdir: Folder");
        assertEquals(7L, events.get(14).get("activity_id"), "chmod: Set Security");
        assertEquals(4L, events.get(17).get("activity_id"), "rmdir: Delete");
        Map<String, Object> anywhere = events.get(15);
        assertEquals("*", at(anywhere, "file.path"));
        assertEquals(500L, anywhere.get("count"));
        assertEquals(300L, at(anywhere, "unmapped.paths"));
    }

    @Test
    void aMissedProgramIsAFailedLaunchAndEscapedNamesSaySoInBothFormats() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(
                log,
                String.join(
                        "\n",
                        "{\"v\":1,\"kind\":\"exec\",\"ts\":\"2026-12-02T20:11:00.500Z\",\"session\":\"c0ffee0123456789\","
                                + "\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0,\"tls\":\"none\",\"exec\":{\"path\":"
                                + "\"/usr/local/bin/git\",\"argv\":[\"git\",\"status\"],\"cwd\":\"/home/u/proj\",\"pid\":3,"
                                + "\"ppid\":1,\"uid\":1000,\"count\":4,\"commands\":2,\"missing\":true}}",
                        "{\"v\":1,\"kind\":\"file\",\"ts\":\"2026-12-02T20:11:00.510Z\",\"session\":\"c0ffee0123456789\","
                                + "\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0,\"tls\":\"none\",\"file\":{\"op\":\"write\","
                                + "\"path\":\"\\\\xff/a\",\"pid\":3,\"count\":1,\"escaped\":true}}",
                        ""));

        LogReaderTestCli.Run ocsf = LogReaderTestCli.run("log", "export", "--format", "ocsf", log.toString());
        assertEquals(ExitCodes.OK, ocsf.exitCode(), ocsf.err());
        List<Map<String, Object>> events = parseLines(ocsf.out());
        Map<String, Object> miss = events.get(0);
        assertEquals(List.of(), OCSF_PROCESS.problems(miss), () -> LogRecordJson.write(miss));
        assertEquals(2L, miss.get("status_id"), "a launch that ran nothing failed");
        assertEquals(true, at(miss, "unmapped.missing"));
        assertEquals(2L, at(miss, "unmapped.commands"));
        Map<String, Object> escaped = events.get(1);
        assertEquals(List.of(), OCSF_FILE.problems(escaped), () -> LogRecordJson.write(escaped));
        assertEquals(true, at(escaped, "unmapped.escaped"));

        LogReaderTestCli.Run ecs = LogReaderTestCli.run("log", "export", "--format", "ecs", log.toString());
        assertEquals(ExitCodes.OK, ecs.exitCode(), ecs.err());
        List<Map<String, Object>> docs = parseLines(ecs.out());
        for (Map<String, Object> doc : docs) {
            assertEquals(List.of(), ECS.problems(doc), () -> LogRecordJson.write(doc));
        }
        assertEquals(true, at(docs.get(0), "agentjail.missing"));
        assertEquals(2L, at(docs.get(0), "agentjail.commands"));
        assertEquals(true, at(docs.get(1), "agentjail.escaped"));

        LogReaderTestCli.Run tail = LogReaderTestCli.run("log", "tail", "--files", log.toString());
        assertEquals(ExitCodes.OK, tail.exitCode(), tail.err());
        assertTrue(tail.out().contains("escaped"), tail.out());
    }

    @Test
    void everyFileOperationHasItsOcsfActivityAndEcsType() {
        Map<String, Long> activity = new LinkedHashMap<>();
        Map<String, String> type = new LinkedHashMap<>();
        for (String op : dev.agentjail.proxy.audit.FileDetails.OPERATIONS) {
            activity.put(op, (long) LogExportOcsf.fileActivityId(op));
            type.put(op, LogExportEcs.fileEventType(op));
        }
        assertEquals(
                Map.ofEntries(
                        Map.entry("write", 3L),
                        Map.entry("truncate", 3L),
                        Map.entry("unlink", 4L),
                        Map.entry("rmdir", 4L),
                        Map.entry("rename", 5L),
                        Map.entry("mkdir", 1L),
                        Map.entry("link", 1L),
                        Map.entry("symlink", 1L),
                        Map.entry("mknod", 1L),
                        Map.entry("chmod", 7L),
                        Map.entry("chown", 7L),
                        Map.entry("utime", 6L),
                        Map.entry("xattr", 6L),
                        Map.entry("bind", 99L)),
                activity);
        assertEquals(
                Map.ofEntries(
                        Map.entry("write", "change"),
                        Map.entry("truncate", "change"),
                        Map.entry("unlink", "deletion"),
                        Map.entry("rmdir", "deletion"),
                        Map.entry("rename", "change"),
                        Map.entry("mkdir", "creation"),
                        Map.entry("link", "creation"),
                        Map.entry("symlink", "creation"),
                        Map.entry("mknod", "creation"),
                        Map.entry("chmod", "change"),
                        Map.entry("chown", "change"),
                        Map.entry("utime", "change"),
                        Map.entry("xattr", "change"),
                        Map.entry("bind", "info")),
                type);
    }

    @Test
    void outputFileIsWrittenWholeWithMode0600() throws Exception {
        Path log = LogReaderTestCli.resource(LogTailTest.SAMPLE);
        Path out = dir.resolve("export.jsonl");
        LogReaderTestCli.Run toFile =
                LogReaderTestCli.run("log", "export", "--format", "ecs", "-o", out.toString(), log.toString());
        assertEquals(ExitCodes.OK, toFile.exitCode(), toFile.err());
        assertEquals("", toFile.out());
        LogReaderTestCli.Run toStdout = LogReaderTestCli.run("log", "export", "--format", "ecs", log.toString());
        assertEquals(toStdout.out(), Files.readString(out));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));

        LogReaderTestCli.Run strict = LogReaderTestCli.run(
                "log",
                "export",
                "--format",
                "ecs",
                "--strict",
                "-o",
                dir.resolve("x.jsonl").toString(),
                log.toString());
        assertEquals(ExitCodes.FAILURE, strict.exitCode(), strict.err());
        assertFalse(Files.exists(dir.resolve("x.jsonl")), "a failed export leaves no file");
        try (var files = Files.list(dir)) {
            assertEquals(List.of(out), files.toList(), "nor a temporary one");
        }
    }

    @Test
    void anUnknownFormatIsAUsageError() {
        Path log = LogReaderTestCli.resource(LogTailTest.SAMPLE);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "export", "--format", "cef", log.toString());
        assertEquals(ExitCodes.USAGE, r.exitCode(), r.err());
        assertTrue(r.err().contains("--format must be ecs or ocsf"), r.err());
    }

    @Test
    void theFieldListCheckCatchesUnknownFieldsWrongTypesAndMissingRequiredOnes() {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("activity_id", 3L);
        doc.put("class_uid", "4002");
        doc.put("made_up", 1L);
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("version", "1.3.0");
        doc.put("metadata", metadata);
        doc.put("http_request", Map.of("url", Map.of("hostname", "h.test")));
        doc.put("dst_endpoint", Map.of("port", 70000L));
        doc.put("unmapped", Map.of("redactions", List.of(Map.of("kind", "k"))));
        List<String> problems = OCSF.problems(doc);
        assertEquals(
                List.of(
                        "class_uid: expected integer_t, found 4002",
                        "unknown field made_up",
                        "dst_endpoint.port: expected port_t, found 70000",
                        "missing required unmapped.redactions.location",
                        "missing required unmapped.redactions.count",
                        "missing required category_uid",
                        "missing required type_uid",
                        "missing required severity_id",
                        "missing required time",
                        "missing required metadata.product",
                        "none of [http_request.url.url_string, http_request.url.path]",
                        "none of [dst_endpoint.hostname, dst_endpoint.ip]"),
                problems);
    }

    static Object at(Map<String, Object> doc, String path) {
        return LogExportFieldList.lookup(doc, path);
    }

    static List<Map<String, Object>> parseLines(String out) throws LogRecordException {
        List<Map<String, Object>> docs = new ArrayList<>();
        for (String line : out.split("\n", -1)) {
            if (line.isEmpty()) {
                continue;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> doc = (Map<String, Object>) LogRecordJson.parse(line);
            docs.add(doc);
        }
        assertTrue(out.isEmpty() || out.endsWith("\n"), "JSON Lines end every line in \\n");
        return docs;
    }
}
