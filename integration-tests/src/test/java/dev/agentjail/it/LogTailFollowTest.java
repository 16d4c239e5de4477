package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.LineQueue;
import dev.agentjail.it.support.ProxyProcess;
import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentjail log tail -f} in its own JVM, following a log by name: it prints what is appended, and after the log
 * is rotated (renamed, a new file started under the same name) it prints what was still written to the old file and
 * then the new file's records.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LogTailFollowTest {
    static final Duration LINE_LIMIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void followPrintsAppendsAndKeepsGoingAcrossRotation() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, line("/old-1") + line("/old-2"));
        ProcessBuilder pb = Command.builder(
                ProxyProcess.cliArgv(List.of("log", "tail", "-f", "-n", "1", "--color", "always", log.toString())),
                ProxyProcess.isolatedData());
        pb.environment().put("NO_COLOR", "1");
        Process tail = pb.start();
        try {
            tail.getOutputStream().close();
            LineQueue out = LineQueue.of(tail.getInputStream());
            assertPath("/old-2", out.next(LINE_LIMIT));

            append(log, line("/appended"));
            assertPath("/appended", out.next(LINE_LIMIT));

            Path rotated = dir.resolve("audit.jsonl.1");
            Files.move(log, rotated);
            append(rotated, line("/last-in-old-file"));
            append(log, line("/first-in-new-file"));
            assertPath("/last-in-old-file", out.next(LINE_LIMIT));
            assertPath("/first-in-new-file", out.next(LINE_LIMIT));

            append(log, line("/second-in-new-file"));
            String last = out.next(LINE_LIMIT);
            assertPath("/second-in-new-file", last);
            assertFalse(last.contains("\u001b"), "NO_COLOR wins over --color always: " + last);
        } finally {
            tail.destroy();
            tail.waitFor(10, TimeUnit.SECONDS);
            tail.destroyForcibly();
        }
    }

    private static void assertPath(String path, String line) {
        assertTrue(
                line != null && line.contains("  http://h.test" + path + "  200  "), () -> path + " expected: " + line);
    }

    private static String line(String path) {
        return AuditJson.toLine(AuditRecord.builder()
                .ts(Instant.parse("2026-11-30T09:44:07.123Z"))
                .session("s")
                .decision(AuditRecord.ALLOW)
                .reason("allowed")
                .method("GET")
                .scheme("http")
                .host("h.test")
                .port(80)
                .path(path)
                .status(200)
                .build());
    }

    private static void append(Path file, String text) throws java.io.IOException {
        Files.writeString(file, text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
