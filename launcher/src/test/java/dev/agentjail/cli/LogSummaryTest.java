package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
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
    void aFileIsRequired() {
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "summary");
        assertEquals(ExitCodes.USAGE, r.exitCode());
        assertTrue(r.err().contains("FILE"), r.err());
    }
}
