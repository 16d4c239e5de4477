package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
    void aLiveSessionsJournalIsLeftAloneAndItsOwnDeleteForgetsIt() throws Exception {
        Path project = project();
        Path sessions = dir.resolve("sessions");
        Optional<Path> journal = PlaceholderJournal.write(
                sessions,
                "s1",
                project,
                List.of(new ProtectedPath(Path.of(".mcp.json"), ProtectedPath.State.MISSING_FILE, Optional.empty())));
        StringWriter err = new StringWriter();

        PlaceholderJournal.sweep(sessions, project, new PrintWriter(err));

        assertTrue(Files.exists(project.resolve(".mcp.json")), "this launcher is alive: nothing is swept");
        assertEquals("", err.toString());
        PlaceholderJournal.delete(journal);
        assertFalse(Files.exists(journal.orElseThrow()));
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
}
