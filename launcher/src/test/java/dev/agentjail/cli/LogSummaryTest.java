package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
