package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.ProtectedPath.State;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProtectedPathsTest {
    @TempDir
    Path project;

    @Test
    void existingPathsAreBoundAndMissingOnesBlockedAtTheirFirstMissingComponent() throws IOException {
        Files.createDirectories(project.resolve(".git/hooks"));
        Files.createDirectories(project.resolve(".claude"));
        Files.writeString(project.resolve(".claude/settings.local.json"), "{}");
        Files.writeString(project.resolve(".claude/settings.team.json"), "{}");

        List<ProtectedPath> resolved = ProtectedPaths.resolve(
                project,
                List.of(
                        ".git/hooks/",
                        ".git/config",
                        ".mcp.json",
                        ".vscode/",
                        ".claude/settings.json",
                        ".claude/settings*.json",
                        ".claude/commands/",
                        ".idea/workspace/x.xml"));

        assertEquals(
                List.of(
                        new ProtectedPath(Path.of(".mcp.json"), State.MISSING_FILE),
                        new ProtectedPath(Path.of(".vscode"), State.MISSING_DIR),
                        new ProtectedPath(Path.of(".idea"), State.MISSING_DIR),
                        new ProtectedPath(Path.of(".git/hooks"), State.EXISTS),
                        new ProtectedPath(Path.of(".git/config"), State.MISSING_FILE),
                        new ProtectedPath(Path.of(".claude/settings.json"), State.MISSING_FILE),
                        new ProtectedPath(Path.of(".claude/settings.local.json"), State.EXISTS),
                        new ProtectedPath(Path.of(".claude/settings.team.json"), State.EXISTS),
                        new ProtectedPath(Path.of(".claude/commands"), State.MISSING_DIR)),
                resolved);
    }

    @Test
    void aMissingGitDirectoryIsBlockedAsAWhole() throws IOException {
        assertEquals(
                List.of(new ProtectedPath(Path.of(".git"), State.MISSING_DIR)),
                ProtectedPaths.resolve(project, List.of(".git/hooks/", ".git/config")));
    }

    @Test
    void aGlobDoesNotProtectItsExistingParent() throws IOException {
        Files.createDirectories(project.resolve(".claude"));
        assertEquals(List.of(), ProtectedPaths.resolve(project, List.of(".claude/settings*.json")));
    }

    @Test
    void symlinkedProtectedPathsFailClosed() throws IOException {
        Files.createSymbolicLink(project.resolve(".mcp.json"), Path.of("elsewhere.json"));
        IOException e = assertThrows(IOException.class, () -> ProtectedPaths.resolve(project, List.of(".mcp.json")));
        assertTrue(e.getMessage().contains("is a symlink"), e.getMessage());

        Files.createDirectories(project.resolve("real-git/hooks"));
        Files.createSymbolicLink(project.resolve(".git"), Path.of("real-git"));
        assertThrows(IOException.class, () -> ProtectedPaths.resolve(project, List.of(".git/hooks/")));
    }

    @Test
    void defaultsCoverTheMandatoryList() {
        for (String required : List.of(
                ".git/hooks/", ".git/config", ".bashrc", ".mcp.json", ".vscode/", ".idea/", ".claude/settings*.json")) {
            assertTrue(ProtectedPaths.DEFAULTS.contains(required), required);
        }
    }

    @Test
    void removesOnlyEmptyPlaceholders() throws IOException {
        List<ProtectedPath> resolved = List.of(
                new ProtectedPath(Path.of(".mcp.json"), State.MISSING_FILE),
                new ProtectedPath(Path.of(".vscode"), State.MISSING_DIR),
                new ProtectedPath(Path.of(".idea"), State.MISSING_DIR),
                new ProtectedPath(Path.of("keep.txt"), State.EXISTS));
        // What bwrap leaves behind, plus one placeholder the host user filled meanwhile.
        Files.createFile(project.resolve(".mcp.json"));
        Files.createDirectory(project.resolve(".vscode"));
        Files.createDirectories(project.resolve(".idea"));
        Files.writeString(project.resolve(".idea/workspace.xml"), "<x/>");
        Files.createFile(project.resolve("keep.txt"));

        assertEquals(List.of(project.resolve(".idea")), ProtectedPaths.removePlaceholders(project, resolved));
        assertFalse(Files.exists(project.resolve(".mcp.json")));
        assertFalse(Files.exists(project.resolve(".vscode")));
        assertTrue(Files.exists(project.resolve(".idea/workspace.xml")));
        assertTrue(Files.exists(project.resolve("keep.txt")));
    }
}
