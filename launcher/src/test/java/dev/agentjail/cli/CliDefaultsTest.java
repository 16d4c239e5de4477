package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the commands do when they are given less (issue 19): {@code log summary}, {@code report} and {@code policy
 * suggest} read the log {@code log tail} reads; {@code log tail -f} waits for a log that is not there yet; {@code
 * policy trust --revoke} with nothing trusted says so; {@code init --agent} knows an agent by its program's name, as
 * {@code run} does. Each runs the real entry point in a child JVM with a home of its own.
 */
class CliDefaultsTest {
    @TempDir
    Path tmp;

    private CliProcess cli;
    private Path project;
    private Path defaultLog;

    private void setUp() throws IOException {
        Path dir = tmp.toRealPath();
        project = Files.createDirectories(dir.resolve("project"));
        Files.createDirectory(project.resolve(".git"));
        cli = new CliProcess(project, dir);
        defaultLog = cli.home().resolve(".local/state/agentjail/audit.jsonl");
    }

    private void writeDefaultLog() throws IOException {
        Files.createDirectories(defaultLog.getParent());
        Files.copy(Path.of(CliErrorsTest.sampleLog()), defaultLog);
    }

    @Test
    void summaryReportAndSuggestReadTheLogTailReads() throws Exception {
        setUp();
        writeDefaultLog();
        CliProcess.Run explicit = cli.run("log", "summary", defaultLog.toString());
        assertEquals(ExitCodes.OK, explicit.exitCode(), explicit.describe());

        CliProcess.Run summary = cli.run("log", "summary");
        assertEquals(ExitCodes.OK, summary.exitCode(), summary.describe());
        assertEquals(explicit.out(), summary.out());
        assertTrue(summary.out().startsWith("16 records in 1 file"), summary.describe());

        Path html = project.resolve("r.html");
        CliProcess.Run report = cli.run("report", "-o", html.toString());
        assertEquals(ExitCodes.OK, report.exitCode(), report.describe());
        assertTrue(report.out().startsWith("wrote " + html + ": 13 requests, 4 denied"), report.describe());

        CliProcess.Run suggest = cli.run("policy", "suggest");
        assertEquals(ExitCodes.OK, suggest.exitCode(), suggest.describe());
        assertTrue(
                suggest.out().startsWith("# agentjail policy suggest: 12 requests read from " + defaultLog),
                suggest.describe());
    }

    @Test
    void withoutTheDefaultLogEachSaysWhichFileIsMissing() throws Exception {
        setUp();
        for (String[] args :
                new String[][] {{"log", "summary"}, {"report", "-o", "r.html"}, {"policy", "suggest"}, {"log", "tail"}
                }) {
            CliProcess.Run r = cli.run(args);
            assertEquals(ExitCodes.USAGE, r.exitCode(), r.describe());
            assertTrue(
                    r.err().startsWith("agentjail: cannot read " + defaultLog + ": no such file or directory"),
                    r.describe());
        }
    }

    @Test
    void tailFollowWaitsForALogThatDoesNotExistYet() throws Exception {
        setUp();
        Process tail = cli.start("log", "tail", "-f");
        try {
            await(() -> read(cli::errSoFar).contains("waiting for"), "the waiting notice", tail);
            assertEquals("agentjail: waiting for " + defaultLog + " to appear (Ctrl-C to stop)\n", cli.errSoFar());
            assertTrue(tail.isAlive(), "tail -f exited on a missing log");

            writeDefaultLog();
            // The sample's 13 requests, from the start of the new log.
            await(() -> read(cli::outSoFar).lines().count() == 13, "every request of the new log", tail);
            assertTrue(cli.outSoFar().startsWith("2026-11-30T09:44:07.123Z  ALLOW  CONNECT"), cli.outSoFar());
            assertEquals(
                    1,
                    cli.errSoFar()
                            .lines()
                            .filter(l -> l.contains("waiting for"))
                            .count(),
                    "said once: " + cli.errSoFar());
        } finally {
            tail.destroy();
            tail.waitFor();
        }
    }

    @Test
    void revokeWithNothingTrustedSaysSo() throws Exception {
        setUp();
        CliProcess.Run r = cli.run("policy", "trust", "--revoke", "--project", project.toString());

        assertEquals(ExitCodes.OK, r.exitCode(), r.describe());
        Path store = cli.home().resolve(".local/state/agentjail/trusted-projects.json");
        assertEquals(
                project + " was not trusted, nor is any project policy (" + store + " lists none); nothing to revoke\n",
                r.out());
    }

    @Test
    void initKnowsAnAgentByItsProgramAsRunDoes() throws Exception {
        setUp();
        CliProcess.Run r = cli.run("init", "--agent", "claude", "--project", project.toString());

        assertEquals(ExitCodes.OK, r.exitCode(), r.describe());
        String written = Files.readString(project.resolve(".agentjail.yaml"));
        assertTrue(written.contains("claude-code"), written);
        CliProcess.Run unknown =
                cli.run("init", "--agent", "no-such-agent", "--project", project.toString(), "--force");
        assertEquals(ExitCodes.USAGE, unknown.exitCode(), unknown.describe());
        assertTrue(
                unknown.err().startsWith("agentjail: --agent: unknown agent 'no-such-agent'; known: "),
                unknown.describe());
    }

    private static String read(IoSupplier s) {
        try {
            return s.get();
        } catch (IOException e) {
            return "";
        }
    }

    @FunctionalInterface
    private interface IoSupplier {
        String get() throws IOException;
    }

    /** Polls until {@code condition} holds; fails after 30 s or when {@code process} ended first. */
    private static void await(Supplier<Boolean> condition, String what, Process process) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.get()) {
            if (!process.isAlive() && !condition.get()) {
                throw new AssertionError("the process ended (exit " + process.exitValue() + ") before " + what);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " within 30 s");
            }
            Thread.sleep(50);
        }
    }
}
