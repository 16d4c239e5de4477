package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogSummaryTest {
    @TempDir
    Path dir;

    @Test
    void summaryCountsPerHostWithTotals() {
        Path log = LogReaderTestCli.resource(LogTailTest.SAMPLE);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "summary", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        LogReaderTestCli.assertGolden("summary.txt", r.out());
        LogReaderTestCli.assertGolden("tail-warnings.txt", r.err().replace(log.toString(), "FILE"));
    }

    @Test
    void programsRunFilesChangedPerDirectoryAndGapsFollowTheHosts() {
        Path log = LogReaderTestCli.resource(LogTailTest.JAIL);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "summary", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        LogReaderTestCli.assertGolden("summary-jail.txt", r.out());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.contains("/usr/bin/cc        4"), "two records, counts 1 and 3:\n" + r.out());
        assertTrue(lines.contains("TOTAL              8"), r.out());
        assertTrue(lines.contains("(anywhere)            500  write (500)"), "the folded \"*\" record:\n" + r.out());
        assertTrue(
                lines.contains("build/                120  write (120)"), "a folded directory is itself:\n" + r.out());
        assertTrue(
                lines.contains("./                      5  mkdir (1), rename (1), rmdir (1), symlink (1), write (1)"),
                "files at the top of the project:\n" + r.out());
        assertTrue(lines.contains("~/.cache/               1  unlink (1)"), r.out());
        assertTrue(lines.contains("AUDIT GAPS  1, 12 events known missed: audit-supervisor-behind (1)"), r.out());
    }

    @Test
    void theDirectoryOfAChangeIsItsParentOrTheFoldedDirectory() {
        assertEquals("src/", LogSummaryStats.directoryOf("src/a.c"));
        assertEquals("./", LogSummaryStats.directoryOf("a.c"));
        assertEquals("~/", LogSummaryStats.directoryOf("~/x"));
        assertEquals("/", LogSummaryStats.directoryOf("/x"));
        assertEquals("/tmp/a/", LogSummaryStats.directoryOf("/tmp/a/"));
        assertEquals("(anywhere)", LogSummaryStats.directoryOf("*"));
    }

    @Test
    void severalFilesAreSummedAndAnEmptyLogSaysSo() throws Exception {
        Path log = LogReaderTestCli.resource(LogTailTest.SAMPLE);
        LogReaderTestCli.Run twice = LogReaderTestCli.run("log", "summary", log.toString(), log.toString());
        assertEquals(ExitCodes.OK, twice.exitCode(), twice.err());
        LogReaderTestCli.assertGolden("summary-twice.txt", twice.out());

        Path empty = Files.createFile(dir.resolve("empty.jsonl"));
        LogReaderTestCli.Run none = LogReaderTestCli.run("log", "summary", empty.toString());
        assertEquals(ExitCodes.OK, none.exitCode(), none.err());
        assertEquals("no records in 1 file\n", none.out());
    }

    @Test
    void withoutAFileTheLogTailReadsIsRead() {
        // CliDefaultsTest runs the commands so, in a home of their own.
        Map<String, String> env = Map.of("XDG_STATE_HOME", "/state", "HOME", "/home/u");
        assertEquals(List.of(Path.of("/state/agentjail/audit.jsonl")), Paths.logsOrDefault(List.of(), env));
        assertEquals(
                List.of(Path.of("/a"), Path.of("/b")), Paths.logsOrDefault(List.of(Path.of("/a"), Path.of("/b")), env));
    }
}
