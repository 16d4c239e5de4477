package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.ProtectedPath.State;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlaceholdersTest {
    @TempDir
    Path dir;

    @Test
    void removesEmptyPlaceholdersAndKeepsFilledOnes() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Files.createFile(project.resolve(".mcp.json"));
        Files.createDirectories(project.resolve(".vscode"));
        Files.writeString(project.resolve(".envrc"), "filled on the host");
        Files.createDirectories(project.resolve(".idea/inside"));
        Files.createDirectories(project.resolve(".claude/commands"));
        Files.writeString(project.resolve(".gitmodules"), "exists");

        List<Path> kept = Placeholders.remove(
                project,
                List.of(
                        new ProtectedPath(Path.of(".mcp.json"), State.MISSING_FILE),
                        new ProtectedPath(Path.of(".vscode"), State.MISSING_DIR),
                        new ProtectedPath(Path.of(".envrc"), State.MISSING_FILE),
                        new ProtectedPath(Path.of(".idea"), State.MISSING_DIR),
                        new ProtectedPath(Path.of(".claude"), State.MISSING_DIR),
                        new ProtectedPath(Path.of(".claude/commands"), State.MISSING_DIR),
                        new ProtectedPath(Path.of(".gitmodules"), State.EXISTS),
                        new ProtectedPath(Path.of(".agentjail.yaml"), State.MISSING_FILE)));

        assertEquals(List.of(project.resolve(".envrc"), project.resolve(".idea")), kept);
        assertFalse(Files.exists(project.resolve(".mcp.json")));
        assertFalse(Files.exists(project.resolve(".vscode")));
        // Deepest first: .claude/commands goes, then the now empty .claude.
        assertFalse(Files.exists(project.resolve(".claude")));
        assertTrue(Files.exists(project.resolve(".gitmodules")));
    }

    @Test
    void aPlaceholderSwappedForALinkToAnOutsideDirectoryIsKeptAndNotFollowed() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.createFile(outside.resolve("settings.json"));
        Files.createSymbolicLink(project.resolve(".vscode"), outside);

        List<Path> kept =
                Placeholders.remove(project, List.of(new ProtectedPath(Path.of(".vscode"), State.MISSING_DIR)));

        assertEquals(List.of(project.resolve(".vscode")), kept);
        assertTrue(Files.isSymbolicLink(project.resolve(".vscode")));
        assertTrue(Files.isRegularFile(outside.resolve("settings.json")));
    }

    @Test
    void aParentSwappedForALinkFailsNamingItAndDeletesNothingOutside() throws IOException {
        // The attack of issue 15: .claude replaced by a link to a directory holding an empty settings.json and an
        // empty commands/, which the old removal deleted by following the link.
        Path project = Files.createDirectories(dir.resolve("p"));
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.createFile(outside.resolve("settings.json"));
        Files.createDirectories(outside.resolve("commands"));
        Files.createSymbolicLink(project.resolve(".claude"), outside);
        Files.createFile(project.resolve(".mcp.json"));

        IOException e = assertThrows(
                IOException.class,
                () -> Placeholders.remove(
                        project,
                        List.of(
                                new ProtectedPath(Path.of(".claude/settings.json"), State.MISSING_FILE),
                                new ProtectedPath(Path.of(".claude/commands"), State.MISSING_DIR),
                                new ProtectedPath(Path.of(".mcp.json"), State.MISSING_FILE))));

        assertTrue(e.getMessage().contains(project.resolve(".claude") + " is a symbolic link"), e.getMessage());
        assertEquals(1, e.getSuppressed().length);
        assertTrue(Files.isRegularFile(outside.resolve("settings.json")));
        assertTrue(Files.isDirectory(outside.resolve("commands")));
        // The others are still removed.
        assertFalse(Files.exists(project.resolve(".mcp.json"), LinkOption.NOFOLLOW_LINKS));
    }
}
