package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.Quarantine;
import dev.agentjail.jail.SurfaceReview;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ReviewCommandTest {
    private static final String FIRST = "1111111111111111";
    private static final String SECOND = "2222222222222222";

    @TempDir
    Path tmp;

    Path project;
    Path home;
    Map<String, String> env;

    record Run(int exitCode, String out, String err) {}

    @BeforeEach
    void layout() throws IOException {
        Path dir = tmp.toRealPath();
        project = Files.createDirectories(dir.resolve("project"));
        home = Files.createDirectories(dir.resolve("home"));
        env = Map.of(
                "HOME", home.toString(), "XDG_STATE_HOME", dir.resolve("state").toString());
    }

    /** A session on {@code project} at {@code time} that leaves {@code files} (path, content) behind. */
    private void session(Path project, String id, String time, List<String> files) throws IOException {
        Clock clock = Clock.fixed(Instant.parse(time), ZoneOffset.UTC);
        SurfaceReview review = new SurfaceReview(SurfaceReview.Limits.DEFAULTS, clock);
        SurfaceReview.Snapshot before = review.snapshot(project, home, List.of(project));
        for (String f : files) {
            Path file = project.resolve(f);
            Files.createDirectories(file.getParent());
            Files.writeString(file, "written in " + id);
        }
        review.afterSession(before, ReviewCommand.quarantineDir(env), id);
    }

    /** Runs the command with {@link #env}, its failures mapped to exit codes as {@link Main} does. */
    private Run review(String... args) {
        ReviewCommand command = new ReviewCommand();
        command.env = env;
        CommandLine cli = new CommandLine(command);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        cli.setExitCodeExceptionMapper(ex -> ex instanceof CliException ce ? ce.exitCode() : ExitCodes.USAGE);
        cli.setExecutionExceptionHandler((ex, c, parsed) -> {
            c.getErr().println("agentjail: " + ex.getMessage());
            return ex instanceof CliException ce ? ce.exitCode() : ExitCodes.FAILURE;
        });
        int code = cli.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void listsTheProjectsItemsNewestFirst() throws IOException {
        Path other = Files.createDirectories(tmp.toRealPath().resolve("other"));
        session(project, FIRST, "2026-01-01T00:00:00Z", List.of(".envrc"));
        session(project, SECOND, "2026-01-02T00:00:00Z", List.of(".vscode/tasks.json"));
        session(other, "3333333333333333", "2026-01-03T00:00:00Z", List.of(".mcp.json"));

        Run run = review("--project", project.toString());

        assertEquals(ExitCodes.OK, run.exitCode(), run.err());
        String out = run.out();
        assertTrue(out.indexOf("Session " + SECOND) < out.indexOf("Session " + FIRST), out);
        assertTrue(
                out.contains("  " + SECOND + "/project/.vscode  editor-settings, new directory, from "
                        + project.resolve(".vscode")),
                out);
        assertTrue(
                out.contains("  " + FIRST + "/project/.envrc  envrc, new file, from " + project.resolve(".envrc")
                        + ", sha256 "),
                out);
        assertFalse(out.contains("3333333333333333"), out);
        assertTrue(review("--all").out().contains("3333333333333333/project/.mcp.json"));
        assertTrue(review("--project", tmp.toString()).out().startsWith("Nothing quarantined for "));
    }

    @Test
    void restorePutsItemsBackAndRefusesToReplaceWithoutForce() throws IOException {
        session(
                project,
                FIRST,
                "2026-01-01T00:00:00Z",
                List.of(".envrc", ".vscode/tasks.json", ".claude/settings.json"));
        assertFalse(Files.exists(project.resolve(".envrc")));

        Run one = review("--restore", FIRST + "/project/.envrc");
        assertEquals(ExitCodes.OK, one.exitCode(), one.err());
        assertEquals(
                "Restored " + project.resolve(".envrc") + " (envrc, from " + FIRST + "/project/.envrc)\n", one.out());
        assertEquals("written in " + FIRST, Files.readString(project.resolve(".envrc")));
        assertFalse(review("--project", project.toString()).out().contains(".envrc"));

        // .vscode exists again: restoring the session's rest is refused, and nothing moves.
        Files.createDirectories(project.resolve(".vscode"));
        Run refused = review("--restore", FIRST);
        assertEquals(ExitCodes.FAILURE, refused.exitCode());
        assertTrue(refused.err().contains(project.resolve(".vscode") + ": exists"), refused.err());
        assertTrue(refused.err().contains("--force replaces"), refused.err());
        assertFalse(Files.exists(project.resolve(".claude")));

        Run forced = review("--restore", FIRST, "--force");
        assertEquals(ExitCodes.OK, forced.exitCode(), forced.err());
        assertEquals("written in " + FIRST, Files.readString(project.resolve(".vscode/tasks.json")));
        assertEquals("written in " + FIRST, Files.readString(project.resolve(".claude/settings.json")));
        // Everything restored: the session's quarantine is gone.
        assertFalse(Files.exists(ReviewCommand.quarantineDir(env).resolve(FIRST)));
    }

    @Test
    void restoreRecreatesMissingParentsAndAcceptsTheOriginalPath() throws IOException {
        session(project, FIRST, "2026-01-01T00:00:00Z", List.of("a/b/.envrc"));
        Files.delete(project.resolve("a/b"));
        Files.delete(project.resolve("a"));
        Run run = review("--restore", FIRST + "/a/b/.envrc");
        assertEquals(ExitCodes.OK, run.exitCode(), run.err());
        assertEquals("written in " + FIRST, Files.readString(project.resolve("a/b/.envrc")));
    }

    @Test
    void discardDeletesASessionsItems() throws IOException {
        session(project, FIRST, "2026-01-01T00:00:00Z", List.of(".envrc", ".husky/pre-commit"));
        Run run = review("--discard", FIRST);
        assertEquals(ExitCodes.OK, run.exitCode(), run.err());
        assertEquals("Discarded 2 quarantined items of session " + FIRST + "\n", run.out());
        assertFalse(Files.exists(ReviewCommand.quarantineDir(env).resolve(FIRST)));
        assertFalse(Files.exists(project.resolve(".envrc")));
        assertTrue(review("--project", project.toString()).out().startsWith("Nothing quarantined"));
    }

    @Test
    void badUsageIsRefused() throws IOException {
        session(project, FIRST, "2026-01-01T00:00:00Z", List.of(".envrc"));
        assertEquals(ExitCodes.USAGE, review("--force").exitCode());
        assertEquals(
                ExitCodes.USAGE, review("--restore", FIRST, "--discard", FIRST).exitCode());
        assertEquals(ExitCodes.USAGE, review("--discard", FIRST, "--all").exitCode());
        assertEquals(ExitCodes.USAGE, review("--restore", "../etc").exitCode());
        Run unknown = review("--restore", "9999999999999999");
        assertEquals(ExitCodes.USAGE, unknown.exitCode());
        assertTrue(unknown.err().contains("no quarantine of session 9999999999999999"), unknown.err());
        Run noItem = review("--restore", FIRST + "/project/nothing");
        assertEquals(ExitCodes.USAGE, noItem.exitCode());
        assertTrue(Files.exists(ReviewCommand.quarantineDir(env).resolve(FIRST + "/project/.envrc")));
    }

    @Test
    void helpShowsExamples() {
        Run help = review("--help");
        assertEquals(ExitCodes.OK, help.exitCode());
        assertTrue(help.out().contains("Examples:"), help.out());
        assertTrue(help.out().contains("agentjail review --restore"), help.out());
        assertEquals(ExitCodes.OK, Main.execute("review", "--help"));
    }

    @Test
    void finishSweepsAnUnfinishedReviewAndClearsItAndListingNamesItUntilThen() throws Exception {
        Files.writeString(project.resolve("old.txt"), "the user's");
        Files.createDirectories(project.resolve("sub"));
        Files.writeString(project.resolve("sub/.envrc"), "the user's");
        Thread.sleep(20);
        Quarantine quarantine = new Quarantine(ReviewCommand.quarantineDir(env), Clock.systemUTC());
        Path probe = Files.createTempFile(tmp, "t", "");
        Instant since = ((java.nio.file.attribute.FileTime) Files.getAttribute(probe, "unix:ctime")).toInstant();
        quarantine.markPending(new Quarantine.Pending(
                FIRST, project, List.of(new SurfaceReview.Root("project", project)), since, "the entry limit"));
        Thread.sleep(20);
        Files.createDirectories(project.resolve("deep/er"));
        Files.writeString(project.resolve("deep/er/.envrc"), "the agent's");

        Run listed = review("--project", project.toString());
        assertTrue(listed.out().contains("UNFINISHED review of session " + FIRST), listed.out());

        Run finished = review("--finish", "--project", project.toString());
        assertEquals(0, finished.exitCode(), finished.out() + finished.err());
        assertTrue(finished.out().contains("new envrc " + project.resolve("deep/er/.envrc")), finished.out());
        assertTrue(finished.out().contains("review finished"), finished.out());
        assertFalse(Files.exists(project.resolve("deep/er/.envrc")));
        assertTrue(Files.exists(project.resolve("sub/.envrc")), "untouched since: the user's");
        assertEquals(List.of(), quarantine.pending());
        assertTrue(review("--finish", "--project", project.toString()).out().contains("No unfinished review"));
    }

    @Test
    void anUnreadableUnfinishedReviewConcernsEveryProjectAndFinishFails() throws IOException {
        Path dir = ReviewCommand.quarantineDir(env).resolve(SECOND);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(Quarantine.PENDING), "{not json");
        List<Quarantine.Pending> pending =
                new Quarantine(ReviewCommand.quarantineDir(env), Clock.systemUTC()).pending();
        assertEquals(1, pending.size());
        assertTrue(ReviewCommand.concerns(pending.get(0), project));
        Run finished = review("--finish", "--project", project.toString());
        assertEquals(ExitCodes.FAILURE, finished.exitCode(), finished.out() + finished.err());
        assertTrue(finished.out().contains("unreadable"), finished.out());
    }
}
