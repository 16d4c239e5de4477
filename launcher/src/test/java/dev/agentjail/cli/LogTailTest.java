package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogTailTest {
    static final String SAMPLE = "audit-sample.jsonl";

    /** A session whose jail ran programs and changed files (exec, file, audit-gap records), as AuditJson wrote it. */
    static final String JAIL = "jail-session.jsonl";

    @TempDir
    Path dir;

    @Test
    void tailPrintsOneLinePerRequestRecord() {
        Path log = LogReaderTestCli.resource(SAMPLE);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "tail", "-n", "100", "--color", "never", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        LogReaderTestCli.assertGolden("tail-all.txt", r.out());
        LogReaderTestCli.assertGolden("tail-warnings.txt", r.err().replace(log.toString(), "FILE"));
    }

    @Test
    void denyAndHostNarrowTheLines() {
        Path log = LogReaderTestCli.resource(SAMPLE);
        LogReaderTestCli.Run deny =
                LogReaderTestCli.run("log", "tail", "-n", "100", "--color", "never", "--deny", log.toString());
        assertEquals(ExitCodes.OK, deny.exitCode(), deny.err());
        LogReaderTestCli.assertGolden("tail-deny.txt", deny.out());

        LogReaderTestCli.Run host =
                LogReaderTestCli.run("log", "tail", "--color", "never", "--host", "EVIL.test.", log.toString());
        List<String> lines = host.out().lines().toList();
        assertEquals(2, lines.size(), host.out());
        assertTrue(lines.stream().allMatch(l -> l.contains("http://evil.test/")), host.out());

        LogReaderTestCli.Run wildcard =
                LogReaderTestCli.run("log", "tail", "--color", "never", "--host", "*.example.test", log.toString());
        List<String> sub = wildcard.out().lines().toList();
        assertEquals(9, sub.size(), wildcard.out());
        assertTrue(sub.stream().noneMatch(l -> l.contains("evil.test")), wildcard.out());
    }

    @Test
    void programsRunAndFilesChangedHaveLinesOfTheirOwn() {
        Path log = LogReaderTestCli.resource(JAIL);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "tail", "-n", "100", "--color", "never", log.toString());
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        assertEquals("", r.err());
        LogReaderTestCli.assertGolden("tail-jail.txt", r.out());
        List<String> lines = r.out().lines().toList();
        assertEquals(19, lines.size(), "every record but the session's start and end");
        assertTrue(
                lines.contains("2026-12-02T20:11:00.520Z  exec   pid 7  /usr/bin/mv mv a b  (cwd /home/u/proj)"),
                r.out());
        assertTrue(lines.contains("2026-12-02T20:11:00.530Z  file   rename a -> b  pid 7"), r.out());
        assertTrue(
                lines.contains(
                        "2026-12-02T20:11:03.000Z  file   write build/ [create,truncate] (40 paths)  pid 9  \u00d7120"),
                r.out());
        assertTrue(
                lines.contains("2026-12-02T20:11:06.000Z  gap    audit-supervisor-behind  missed 12"
                        + "  error the launcher did not take events for 2s"),
                r.out());
        // A hostile argument: no raw escape or bidi control, and an argument with a space stays one word.
        assertFalse(r.out().contains("\u001b"), r.out());
        assertFalse(r.out().contains("\u202e"), r.out());
        assertTrue(
                r.out()
                        .contains("exec   pid 11  '/tmp/evil tool' evil '<script>alert(1)</script>' 'a b'"
                                + " '\\u001b[31mred\\u202e'"),
                r.out());
    }

    @Test
    void execAndFilesKeepOnlyTheirRecordsAndTheGapsAndNarrowLikeTheOtherFilters() {
        Path log = LogReaderTestCli.resource(JAIL);
        List<String> exec = tail(log, "--exec");
        assertEquals(7, exec.size(), String.join("\n", exec));
        assertTrue(exec.stream().allMatch(l -> l.contains("  exec   ") || l.contains("  gap    ")), exec.toString());
        assertEquals(1, exec.stream().filter(l -> l.contains("  gap    ")).count(), exec.toString());

        List<String> files = tail(log, "--files");
        assertEquals(12, files.size(), String.join("\n", files));
        assertTrue(files.stream().allMatch(l -> l.contains("  file   ") || l.contains("  gap    ")), files.toString());

        List<String> both = tail(log, "--exec", "--files");
        assertEquals(18, both.size(), "exec, file and gap records: all but the request");
        assertTrue(both.stream().noneMatch(l -> l.contains("CONNECT")), both.toString());
        assertEquals(19, tail(log).size(), "without a filter, the request too");

        assertEquals(List.of(), tail(log, "--exec", "--deny"), "--deny keeps requests only, as with --host");
        assertEquals(List.of(), tail(log, "--files", "--host", "registry.example.test"));
        assertEquals(1, tail(log, "--host", "registry.example.test").size());
    }

    private static List<String> tail(Path log, String... filters) {
        List<String> args = new ArrayList<>(List.of("log", "tail", "-n", "100", "--color", "never"));
        args.addAll(List.of(filters));
        args.add(log.toString());
        LogReaderTestCli.Run r = LogReaderTestCli.run(args.toArray(String[]::new));
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        return r.out().lines().toList();
    }

    @Test
    void withoutLinesItPrintsTheLastTen() {
        Path log = LogReaderTestCli.resource(SAMPLE);
        LogReaderTestCli.Run all = LogReaderTestCli.run("log", "tail", "-n", "100", "--color", "never", log.toString());
        LogReaderTestCli.Run last = LogReaderTestCli.run("log", "tail", "--color", "never", log.toString());
        List<String> every = all.out().lines().toList();
        assertTrue(every.size() > 10, all.out());
        assertEquals(
                every.subList(every.size() - 10, every.size()),
                last.out().lines().toList());
    }

    @Test
    void colourMarksOnlyTheDecisionAndNothingFromTheLogReachesTheTerminalRaw() {
        Path log = LogReaderTestCli.resource(SAMPLE);
        LogReaderTestCli.Run plain =
                LogReaderTestCli.run("log", "tail", "-n", "100", "--color", "never", log.toString());
        // The sample has a path with ESC [31m and a right-to-left override: both must arrive as visible escapes.
        assertFalse(plain.out().contains("\u001b"), plain.out());
        assertFalse(plain.out().contains("\u202e"), plain.out());
        assertTrue(plain.out().contains("/a\\u001b[31mred\\u202eevil"), plain.out());

        LogReaderTestCli.Run coloured =
                LogReaderTestCli.run("log", "tail", "-n", "100", "--color", "always", log.toString());
        assertTrue(coloured.out().contains("  \u001b[1;31mDENY \u001b[0m  GET"), coloured.out());
        assertTrue(coloured.out().contains("  \u001b[32mALLOW\u001b[0m  POST"), coloured.out());
        assertTrue(coloured.out().contains("  \u001b[33mERROR\u001b[0m  -"), coloured.out());
        String stripped = coloured.out().replaceAll("\u001b\\[[0-9;]*m", "");
        assertEquals(plain.out(), stripped, "colour adds escape codes around the decision and nothing else");
    }

    @Test
    void noColorWinsOverEverythingAndAutoColoursOnlyATerminal() {
        Map<String, String> none = Map.of();
        Map<String, String> noColor = Map.of("NO_COLOR", "1");
        assertTrue(LogTailFormat.useColor("auto", none, true));
        assertFalse(LogTailFormat.useColor("auto", none, false));
        assertFalse(LogTailFormat.useColor("auto", Map.of("TERM", "dumb"), true));
        assertTrue(LogTailFormat.useColor("always", none, false));
        assertFalse(LogTailFormat.useColor("never", none, true));
        assertFalse(LogTailFormat.useColor("auto", noColor, true));
        assertFalse(LogTailFormat.useColor("always", noColor, true), "NO_COLOR beats --color always");
        assertTrue(LogTailFormat.useColor("auto", Map.of("NO_COLOR", ""), true), "an empty NO_COLOR does not count");
    }

    @Test
    void strictStopsAtTheFirstBadLineNamingFileAndLine() {
        Path log = LogReaderTestCli.resource(SAMPLE);
        LogReaderTestCli.Run r = LogReaderTestCli.run("log", "tail", "--strict", log.toString());
        assertEquals(ExitCodes.FAILURE, r.exitCode(), r.err());
        assertTrue(r.err().contains(log + ":12: invalid JSON at column "), r.err());
        assertEquals("", r.out());
    }

    @Test
    void aMissingLogAndBadOptionsAreReported() {
        LogReaderTestCli.Run missing =
                LogReaderTestCli.run("log", "tail", dir.resolve("none.jsonl").toString());
        assertEquals(ExitCodes.USAGE, missing.exitCode());
        assertTrue(
                missing.err()
                        .startsWith("agentjail: cannot read " + dir.resolve("none.jsonl")
                                + ": no such file or directory; it is written once a session (agentjail run) or"
                                + " agentjail proxy starts; -f waits for it"),
                missing.err());
        LogReaderTestCli.Run colour = LogReaderTestCli.run(
                "log", "tail", "--color", "sometimes", dir.resolve("x").toString());
        assertEquals(ExitCodes.USAGE, colour.exitCode(), colour.err());
    }

    @Test
    void followReadsAppendsWaitsForWholeLinesAndFollowsTheNameAcrossRotationAndTruncation() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Path rotated = dir.resolve("audit.jsonl.1");
        Files.writeString(log, line("/before"));
        List<String> seen = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Deque<Runnable> steps = new ArrayDeque<>(List.of(
                () -> append(log, line("/a") + line("/b").substring(0, 40)),
                () -> append(log, line("/b").substring(40)),
                () -> {
                    move(log, rotated);
                    append(rotated, line("/c")); // written by the writer just before it switched files
                    append(log, line("/d"));
                },
                () -> append(log, line("/e")),
                () -> {
                    write(log, line("/f")); // truncated in place and rewritten
                }));
        LogTailFollower follower =
                new LogTailFollower(log, p -> problems.add(p.toString()), r -> seen.add(r.path()), () -> {}, () -> {
                    Runnable step = steps.poll();
                    if (step != null) {
                        step.run();
                    }
                });
        LogReader reader = LogReader.open(log, p -> problems.add(p.toString()));
        follower.run(reader, steps::isEmpty);
        assertEquals(List.of("/before", "/a", "/b", "/c", "/d", "/e", "/f"), seen);
        assertEquals(List.of(), problems, "a line still being written is not a problem");
    }

    private static String line(String path) {
        return "{\"v\":1,\"kind\":\"request\",\"ts\":\"2026-11-30T09:44:07.123Z\",\"session\":\"s\",\"decision\":\"allow\","
                + "\"reason\":\"allowed\",\"method\":\"GET\",\"host\":\"h.test\",\"path\":\"" + path
                + "\",\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0,\"tls\":\"none\"}\n";
    }

    private static void append(Path file, String text) {
        try {
            Files.writeString(file, text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void move(Path from, Path to) {
        try {
            Files.move(from, to);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
