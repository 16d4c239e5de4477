package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.ProtectedPath;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PlaceholderJournalTest {
    @TempDir
    Path dir;

    private static String hex(String s) {
        return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    private Path project() throws Exception {
        Path project = Files.createDirectories(dir.resolve("proj"));
        Files.createFile(project.resolve(".mcp.json"));
        Files.createDirectories(project.resolve(".vscode"));
        Files.writeString(project.resolve(".envrc"), "filled meanwhile\n");
        return project;
    }

    @Test
    void aLiveSessionsJournalIsLeftAloneAndItsReleaseForgetsIt() throws Exception {
        Path project = project();
        Path sessions = dir.resolve("sessions");
        PlaceholderJournal.Claim claim =
                PlaceholderJournal.claim(sessions, "s1", project, new PrintWriter(new StringWriter()));
        PlaceholderJournal.note(
                claim,
                List.of(new ProtectedPath(Path.of(".mcp.json"), ProtectedPath.State.MISSING_FILE, Optional.empty())));
        StringWriter err = new StringWriter();

        PlaceholderJournal.sweep(sessions, project, new PrintWriter(err));

        assertTrue(Files.exists(project.resolve(".mcp.json")), "this launcher is alive: nothing is swept");
        assertEquals("", err.toString());
        PlaceholderJournal.release(claim);
        assertFalse(Files.exists(claim.file()));
    }

    @Test
    void aDeadSessionsEmptyPlaceholdersGoAndWhatWasFilledStays() throws Exception {
        Path project = project();
        Path sessions = Files.createDirectories(dir.resolve("sessions"));
        // pid 1 never started at the epoch: the launcher that wrote this is gone.
        Files.writeString(
                sessions.resolve("dead.placeholders"),
                "agentjail-placeholders 1\npid 1 0\nproject " + hex(project.toString()) + "\nfile " + hex(".mcp.json")
                        + "\ndir " + hex(".vscode") + "\nfile " + hex(".envrc") + "\n");
        Files.writeString(
                sessions.resolve("other.placeholders"),
                "agentjail-placeholders 1\npid 1 0\nproject " + hex("/elsewhere") + "\nfile " + hex(".mcp.json")
                        + "\n");
        Files.writeString(
                sessions.resolve("odd.placeholders"),
                "agentjail-placeholders 1\npid 1 0\nproject " + hex(project.toString()) + "\nfile "
                        + hex("../../outside") + "\n");
        StringWriter err = new StringWriter();

        PlaceholderJournal.sweep(sessions, project, new PrintWriter(err));

        assertFalse(Files.exists(project.resolve(".mcp.json")), err::toString);
        assertFalse(Files.exists(project.resolve(".vscode")), err::toString);
        assertTrue(Files.exists(project.resolve(".envrc")), "a placeholder the user filled is kept");
        assertTrue(err.toString().contains("session dead on " + project + " did not end"), err::toString);
        assertTrue(err.toString().contains("kept"), err::toString);
        assertFalse(Files.exists(sessions.resolve("dead.placeholders")));
        assertTrue(Files.exists(sessions.resolve("other.placeholders")), "another project's journal stays");
        assertTrue(err.toString().contains("ignoring the unreadable session journal"), err::toString);
    }

    /** A journal in the form a live launcher writes: this test's JVM, which runs, for {@code project}. */
    private static void liveJournal(Path sessions, String id, Path project) throws Exception {
        Files.createDirectories(sessions);
        ProcessHandle self = ProcessHandle.current();
        Files.writeString(
                sessions.resolve(id + ".placeholders"),
                "agentjail-placeholders 1\npid " + self.pid() + " "
                        + self.info().startInstant().orElseThrow().toEpochMilli() + "\nproject "
                        + hex(project.toString()) + "\n");
    }

    @ParameterizedTest(name = "live session on {0}")
    @ValueSource(strings = {"proj", "proj/sub", "."})
    void aLiveSessionOnTheProjectInsideItOrAroundItRefusesTheClaim(String where) throws Exception {
        Path project = project();
        Path sessions = dir.resolve("sessions");
        Path running = dir.resolve(where).normalize();
        liveJournal(sessions, "first", running);
        StringWriter err = new StringWriter();

        CliException refused = assertThrows(
                CliException.class, () -> PlaceholderJournal.claim(sessions, "second", project, new PrintWriter(err)));

        assertEquals(ExitCodes.USAGE, refused.exitCode());
        assertTrue(refused.getMessage().contains("session first"), refused::getMessage);
        assertTrue(
                refused.getMessage().contains("pid " + ProcessHandle.current().pid()), refused::getMessage);
        assertTrue(refused.getMessage().contains(running.toString()), refused::getMessage);
        assertFalse(Files.exists(sessions.resolve("second.placeholders")), "a refused claim leaves no journal");
    }

    @Test
    void aClaimBesideALiveSessionIsTakenThenNotedThenReleased() throws Exception {
        Path project = project();
        Path sessions = dir.resolve("sessions");
        // Beside the project, and a project whose name only starts like it: neither is inside or around it.
        liveJournal(sessions, "beside", dir.resolve("other"));
        liveJournal(sessions, "prefix", dir.resolve("proj2"));
        StringWriter err = new StringWriter();

        PlaceholderJournal.Claim claim = PlaceholderJournal.claim(sessions, "s2", project, new PrintWriter(err));
        PlaceholderJournal.note(
                claim,
                List.of(new ProtectedPath(Path.of(".mcp.json"), ProtectedPath.State.MISSING_FILE, Optional.empty())));

        // The noted journal is what a sweep reads: live, so another claim on the project is refused.
        assertThrows(
                CliException.class,
                () -> PlaceholderJournal.claim(sessions, "s3", project, new PrintWriter(new StringWriter())));
        assertTrue(Files.readString(claim.file()).contains("file " + hex(".mcp.json")));
        assertEquals(
                "rw-------",
                java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(claim.file())));
        PlaceholderJournal.release(claim);
        assertFalse(Files.exists(claim.file()));
        PlaceholderJournal.release(
                PlaceholderJournal.claim(sessions, "s4", project, new PrintWriter(new StringWriter())));
        assertEquals("", err.toString());
    }

    @Test
    void aClaimSweepsWhatADeadSessionLeftOnTheProject() throws Exception {
        Path project = project();
        Path sessions = Files.createDirectories(dir.resolve("sessions"));
        Files.writeString(
                sessions.resolve("dead.placeholders"),
                "agentjail-placeholders 1\npid 1 0\nproject " + hex(project.toString()) + "\nfile " + hex(".mcp.json")
                        + "\n");
        StringWriter err = new StringWriter();

        PlaceholderJournal.Claim claim = PlaceholderJournal.claim(sessions, "s5", project, new PrintWriter(err));

        assertFalse(Files.exists(project.resolve(".mcp.json")), err::toString);
        assertFalse(Files.exists(sessions.resolve("dead.placeholders")));
        assertTrue(Files.exists(claim.file()));
    }

    @Test
    void aSecondPathToTheSameDirectoryOrOneAroundItIsNoWayAroundTheClaim() throws Exception {
        // A bind mount makes a second path to a directory; a symbolic link stands in for it here (a path that
        // toRealPath was not asked to resolve): the claim compares the directories themselves, upward.
        Path project = project();
        Path alias = Files.createSymbolicLink(dir.resolve("alias"), project);
        Files.createDirectories(project.resolve("sub"));

        assertTrue(PlaceholderJournal.overlap(alias, project));
        assertTrue(PlaceholderJournal.overlap(project.resolve("sub"), alias));
        assertTrue(PlaceholderJournal.overlap(alias.resolve("sub"), project));
        assertTrue(PlaceholderJournal.overlap(project, alias.resolve("sub")));
        assertFalse(PlaceholderJournal.overlap(dir.resolve("proj2"), project));
        assertFalse(PlaceholderJournal.overlap(Files.createDirectories(dir.resolve("beside")), alias));
    }
}
