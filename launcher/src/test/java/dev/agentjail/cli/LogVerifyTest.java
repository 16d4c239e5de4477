package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditHmacKey;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.ExecDetails;
import dev.agentjail.proxy.audit.FileAuditLog;
import dev.agentjail.proxy.audit.FileDetails;
import dev.agentjail.proxy.audit.GapDetails;
import dev.agentjail.proxy.audit.SessionDetails;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogVerifyTest {
    private static final String KEY = "a key for the audit log tests, 32+ bytes\n";

    @TempDir
    Path dir;

    record Run(int exitCode, String out, String err) {}

    /** Runs the real entry point; picocli writes to System.out/err, swapped here for the duration. */
    static synchronized Run run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.execute(args);
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    private Path keyFile() throws Exception {
        Path key = dir.resolve("audit.key");
        Files.writeString(key, KEY);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        return key;
    }

    private Path log(int records, long maxBytes, Path key) throws Exception {
        Path file = dir.resolve("audit.jsonl");
        FileAuditLog.Options options = FileAuditLog.Options.defaults()
                .withSyncInterval(Duration.ofHours(1))
                .withMaxFileBytes(maxBytes);
        if (key != null) {
            options = options.withHmacKey(AuditHmacKey.load(key));
        }
        try (FileAuditLog log = FileAuditLog.open(file, options)) {
            for (int i = 1; i <= records; i++) {
                log.append(AuditRecord.builder()
                        .ts(Instant.parse("2026-11-30T09:44:07.123Z"))
                        .session("s")
                        .decision(AuditRecord.ALLOW)
                        .reason("allowed")
                        .host("api.allowed.test")
                        .path("/" + i)
                        .build());
            }
        }
        return file;
    }

    @Test
    void helpNamesTheOptionsAndTheExitStatus() {
        Run r = run("log", "verify", "--help");

        assertEquals(ExitCodes.OK, r.exitCode());
        for (String expected : List.of("--hmac-key", "--partial", "--no-rotated", "Exit status", "bad-hmac")) {
            assertTrue(r.out().contains(expected), () -> expected + " missing from: " + r.out());
        }
    }

    @Test
    void anIntactLogExitsZero() throws Exception {
        Path file = log(5, 0, null);

        Run r = run("log", "verify", file.toString());

        assertEquals(ExitCodes.OK, r.exitCode(), r::toString);
        assertEquals(file + ": intact: 5 records (seq 1–5)\n", r.out());
    }

    @Test
    void aLogWithExecFileAndGapRecordsVerifiesAndAnEditedArgumentDoesNot() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        Instant ts = Instant.parse("2026-12-02T20:11:07.123Z");
        FileAuditLog.Options options = FileAuditLog.Options.defaults()
                .withSyncInterval(Duration.ofHours(1))
                .withHmacKey(AuditHmacKey.load(keyFile()));
        try (FileAuditLog log = FileAuditLog.open(file, options)) {
            log.append(AuditRecord.builder()
                    .kind(AuditRecord.KIND_EXEC)
                    .ts(ts)
                    .session("s")
                    .exec(new ExecDetails(
                            "/usr/bin/mv", List.of("mv", "a", "b \u001b<x>"), false, "/proj", 7, 3, 1000, 1, false))
                    .build());
            log.append(AuditRecord.builder()
                    .kind(AuditRecord.KIND_FILE)
                    .ts(ts)
                    .session("s")
                    .file(new FileDetails("rename", "a", "b", null, 7, 1, 1, false))
                    .build());
            log.append(AuditRecord.builder()
                    .kind(AuditRecord.KIND_FILE)
                    .ts(ts)
                    .session("s")
                    .file(new FileDetails("write", "build/", null, List.of("create"), 9, 120, 40, true))
                    .build());
            log.append(AuditRecord.builder()
                    .kind(AuditRecord.KIND_AUDIT_GAP)
                    .ts(ts)
                    .session("s")
                    .reason("audit-supervisor-stopped")
                    .error("EOF on the supervisor's socket")
                    .gap(new GapDetails(0, true))
                    .build());
            log.append(AuditRecord.builder()
                    .kind(AuditRecord.KIND_SESSION_END)
                    .ts(ts)
                    .session("s")
                    .sessionDetails(SessionDetails.end(0, 0, 0).withActivity(1L, 2L))
                    .build());
        }

        Run r = run("log", "verify", "--hmac-key", keyFile().toString(), file.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r::toString);
        assertEquals(file + ": intact: 5 records (seq 1–5), HMAC verified\n", r.out());
        Run tail = run("log", "tail", "--strict", "--color", "never", file.toString());
        assertEquals(ExitCodes.OK, tail.exitCode(), tail::toString);
        assertEquals(4, tail.out().lines().count(), "the log commands read every record of the chain: " + tail);

        String edited = Files.readString(file).replace("\"mv\",\"a\"", "\"mv\",\"z\"");
        Files.writeString(file, edited);
        Run broken = run("log", "verify", file.toString());
        assertEquals(ExitCodes.FAILURE, broken.exitCode(), broken::toString);
        assertTrue(broken.out().startsWith(file + ":1: modified:"), broken.out());
    }

    @Test
    void aDeletedRecordExitsOneNamingFileAndLine() throws Exception {
        Path file = log(5, 0, null);
        List<String> lines = new ArrayList<>(Files.readAllLines(file));
        lines.remove(2);
        Files.write(file, lines);

        Run r = run("log", "verify", file.toString());

        assertEquals(ExitCodes.FAILURE, r.exitCode(), r::toString);
        assertTrue(r.out().startsWith(file + ":3: deleted: seq jumps from 2 to 4"), r.out());
        assertTrue(r.out().contains(file + ": BROKEN after 2 intact records"), r.out());
    }

    @Test
    void rotatedFilesAreFoundFromAnyMemberOfTheSet() throws Exception {
        Path file = log(40, 2048, null);
        Path second = file.resolveSibling("audit.jsonl.2");
        assertTrue(Files.exists(second));

        Run fromLive = run("log", "verify", file.toString());
        Run fromRotated = run("log", "verify", second.toString());

        assertEquals(ExitCodes.OK, fromLive.exitCode(), fromLive::toString);
        assertTrue(fromLive.out().matches("(?s).*intact: \\d+ files, 40 records \\(seq 1–40\\)\n"), fromLive.out());
        assertEquals(fromLive, fromRotated);

        Files.delete(file.resolveSibling("audit.jsonl.1"));
        Run dropped = run("log", "verify", file.toString());
        assertEquals(ExitCodes.FAILURE, dropped.exitCode(), dropped::toString);
        assertTrue(dropped.out().startsWith(file.resolveSibling("audit.jsonl.2") + ":1: deleted:"), dropped.out());
        Run partial = run("log", "verify", "--partial", file.toString());
        assertEquals(ExitCodes.OK, partial.exitCode(), partial::toString);
        assertTrue(partial.out().contains("partial-start"), partial.out());
    }

    @Test
    void noRotatedChecksOnlyTheGivenFiles() throws Exception {
        Path file = log(40, 2048, null);

        Run r = run("log", "verify", "--no-rotated", file.toString());

        assertEquals(ExitCodes.FAILURE, r.exitCode(), "the live file alone does not start at seq 1: " + r);
        assertEquals(
                ExitCodes.OK,
                run("log", "verify", "--no-rotated", "--partial", file.toString())
                        .exitCode());
    }

    @Test
    void theHmacKeyIsCheckedWhenGiven() throws Exception {
        Path key = keyFile();
        Path file = log(3, 0, key);

        Run withKey = run("log", "verify", "--hmac-key", key.toString(), file.toString());
        assertEquals(ExitCodes.OK, withKey.exitCode(), withKey::toString);
        assertTrue(withKey.out().endsWith("3 records (seq 1–3), HMAC verified\n"), withKey.out());

        Run withoutKey = run("log", "verify", file.toString());
        assertEquals(ExitCodes.OK, withoutKey.exitCode());
        assertTrue(withoutKey.out().contains("hmac-unchecked"), withoutKey.out());

        Files.writeString(key, "another key for the audit log tests, 32+ bytes");
        Run wrongKey = run("log", "verify", "--hmac-key", key.toString(), file.toString());
        assertEquals(ExitCodes.FAILURE, wrongKey.exitCode());
        assertTrue(wrongKey.out().startsWith(file + ":1: bad-hmac:"), wrongKey.out());
        assertFalse(wrongKey.out().contains("another key"), "the key is never printed");
    }

    @Test
    void aLooseKeyFileOrAMissingLogIsAUsageError() throws Exception {
        Path key = keyFile();
        Path file = log(1, 0, null);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));

        Run loose = run("log", "verify", "--hmac-key", key.toString(), file.toString());
        Run missing = run("log", "verify", dir.resolve("nope.jsonl").toString());

        assertEquals(ExitCodes.USAGE, loose.exitCode());
        assertTrue(loose.err().contains("chmod 600"), loose.err());
        assertEquals(ExitCodes.USAGE, missing.exitCode());
        assertEquals(
                "agentjail: cannot read " + dir.resolve("nope.jsonl") + ": no such file or directory\n", missing.err());
    }

    @Test
    void oneBrokenLogAmongSeveralFailsTheWholeRun() throws Exception {
        Path good = log(2, 0, null);
        Path other = Files.createDirectory(dir.resolve("other")).resolve("audit.jsonl");
        Files.copy(good, other);
        Files.writeString(other, "{\"v\":1,\"kind\":\"forged\"}\n", java.nio.file.StandardOpenOption.APPEND);

        Run r = run("log", "verify", good.toString(), other.toString());

        assertEquals(ExitCodes.FAILURE, r.exitCode());
        assertTrue(r.out().contains(good + ": intact"), r.out());
        assertTrue(r.out().contains(other + ":3: truncated:"), r.out());
    }

    @Test
    void maxSizeAcceptsUnitsAndZeroAndRefusesTinyValues() {
        assertEquals(64L << 20, AuditChainOptions.parseMaxSize("64m"));
        assertEquals(1L << 30, AuditChainOptions.parseMaxSize("1G"));
        assertEquals(0, AuditChainOptions.parseMaxSize("0"));
        assertEquals(
                ExitCodes.USAGE,
                assertThrows(CliException.class, () -> AuditChainOptions.parseMaxSize("1k"))
                        .exitCode());
        assertEquals(
                ExitCodes.USAGE,
                assertThrows(CliException.class, () -> AuditChainOptions.parseMaxSize("64"))
                        .exitCode());
    }
}
