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
                        new ProtectedPath(Path.of(".git"), State.PIN),
                        new ProtectedPath(Path.of(".claude"), State.PIN),
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
                // And HEAD: git would take the project itself for a bare repository with HEAD, objects/ and refs/.
                List.of(
                        new ProtectedPath(Path.of(".git"), State.MISSING_DIR),
                        new ProtectedPath(Path.of("HEAD"), State.MISSING_FILE)),
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
    void everyDirectoryOnTheWayToAProtectedPathIsPinnedSoItCannotBeSwappedOut() throws IOException {
        Files.createDirectories(project.resolve("a/b/c"));
        Files.writeString(project.resolve("a/b/c/hook.sh"), "echo hi\n");

        List<ProtectedPath> resolved =
                ProtectedPaths.resolve(project, List.of("a/b/c/hook.sh", "a/b/missing/x.json", "top.json"));

        assertEquals(
                List.of(
                        new ProtectedPath(Path.of("top.json"), State.MISSING_FILE),
                        new ProtectedPath(Path.of("a"), State.PIN),
                        new ProtectedPath(Path.of("a/b"), State.PIN),
                        new ProtectedPath(Path.of("a/b/missing"), State.MISSING_DIR),
                        new ProtectedPath(Path.of("a/b/c"), State.PIN),
                        new ProtectedPath(Path.of("a/b/c/hook.sh"), State.EXISTS)),
                resolved);
    }

    @Test
    void theRepositorysOtherConfigurationAndEachWorktreeAndSubmoduleRepositoryAreProtectedWhereTheyExist()
            throws IOException {
        Files.createDirectories(project.resolve(".git/hooks"));
        Files.createDirectories(project.resolve(".git/info"));
        Files.writeString(project.resolve(".git/config.worktree"), "");
        Files.createDirectories(project.resolve(".git/worktrees/wt"));
        Files.writeString(project.resolve(".git/worktrees/wt/commondir"), "../..\n");
        Files.writeString(project.resolve(".git/worktrees/wt/gitdir"), "/elsewhere/.git\n");
        Files.createDirectories(project.resolve(".git/modules/lib/a/hooks"));
        Files.writeString(project.resolve(".git/modules/lib/a/HEAD"), "ref: refs/heads/main\n");
        Files.writeString(project.resolve(".git/modules/lib/a/config"), "[core]\n");
        Files.createDirectories(project.resolve(".git/modules/lib/a/modules/inner"));
        Files.writeString(project.resolve(".git/modules/lib/a/modules/inner/HEAD"), "ref: refs/heads/main\n");
        Files.writeString(project.resolve(".git/modules/lib/a/modules/inner/config"), "[core]\n");

        List<Path> protectedPaths = ProtectedPaths.resolve(project, List.of(".git/hooks/")).stream()
                .filter(p -> p.state() == State.EXISTS)
                .map(ProtectedPath::relative)
                .toList();

        for (String expected : List.of(
                ".git/hooks",
                ".git/info",
                ".git/config.worktree",
                ".git/worktrees/wt/commondir",
                ".git/worktrees/wt/gitdir",
                ".git/modules/lib/a/config",
                ".git/modules/lib/a/hooks",
                ".git/modules/lib/a/modules/inner/config")) {
            assertTrue(protectedPaths.contains(Path.of(expected)), expected + " in " + protectedPaths);
        }
        assertFalse(protectedPaths.contains(Path.of(".git/commondir")), "a missing commondir cannot be blocked");
    }

    @Test
    void aProtectedFileWithASecondHardLinkRefusesTheSession() throws IOException {
        Files.createDirectories(project.resolve(".git/hooks"));
        Files.writeString(project.resolve(".git/hooks/pre-commit"), "echo ok\n");
        Files.createLink(project.resolve("innocent.txt"), project.resolve(".git/hooks/pre-commit"));

        IOException e = assertThrows(IOException.class, () -> ProtectedPaths.resolve(project, List.of(".git/hooks/")));

        assertTrue(e.getMessage().contains(".git/hooks/pre-commit has 2 hard links"), e.getMessage());
        Files.delete(project.resolve("innocent.txt"));
        Files.writeString(project.resolve(".mcp.json"), "{}");
        Files.createLink(project.resolve("other.json"), project.resolve(".mcp.json"));
        assertThrows(IOException.class, () -> ProtectedPaths.resolve(project, List.of(".git/hooks/", ".mcp.json")));
    }

    @Test
    void aStarBeforeTheLastComponentIsRefusedNotTakenLiterally() {
        IOException e =
                assertThrows(IOException.class, () -> ProtectedPaths.resolve(project, List.of("svc/*/deploy.sh")));
        assertTrue(e.getMessage().contains("has a * before its last component"), e.getMessage());
        assertThrows(IOException.class, () -> ProtectedPaths.resolve(project, List.of("**/deploy.sh")));
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
