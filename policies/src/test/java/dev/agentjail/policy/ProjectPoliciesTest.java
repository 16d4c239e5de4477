package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProjectPoliciesTest {
    @TempDir
    Path temp;

    /** The real temp dir: on some systems it lives behind a symlink, and find returns real paths. */
    private Path root;

    @BeforeEach
    void realRoot() throws IOException {
        root = temp.toRealPath();
    }

    private Path dirs(String relative) throws IOException {
        return Files.createDirectories(root.resolve(relative));
    }

    /** Makes {@code dir} a repository's top as git sees it: a .git with HEAD and objects. */
    private void repo(String dir) throws IOException {
        Path git = dirs(dir + "/.git");
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.createDirectories(git.resolve("objects"));
    }

    @Test
    void aRepositoryInsideAnotherBelongsToTheOutersProject() throws Exception {
        repo("super");
        Path top = policy("super");
        // A submodule, a nested clone, or a repository an agent made to cut the root's policy off.
        repo("super/vendor/lib");
        Path inner = policy("super/vendor/lib");
        assertEquals(List.of(top, inner), ProjectPolicies.chain(dirs("super/vendor/lib/src")));
    }

    @Test
    void anEmptyDotGitIsNoRepositoryAndDoesNotCutTheRootOff() throws Exception {
        repo("repo");
        Path top = policy("repo");
        // What a session leaves while it runs in a subdirectory without a repository of its own: a placeholder.
        dirs("repo/sub/.git");
        Path sub = policy("repo/sub");
        assertEquals(List.of(top, sub), ProjectPolicies.chain(root.resolve("repo/sub")));
    }

    private Path policy(String dir) throws IOException {
        return Files.writeString(dirs(dir).resolve(".agentjail.yaml"), "version: 1\n");
    }

    @Test
    void policyInTheProjectDirectoryIsFound() throws Exception {
        repo("repo");
        Path file = policy("repo");
        assertEquals(Optional.of(file), ProjectPolicies.find(root.resolve("repo")));
    }

    @Test
    void searchWalksUpToTheRepositoryRoot() throws Exception {
        repo("repo");
        Path file = policy("repo");
        Path project = dirs("repo/services/api");
        assertEquals(Optional.of(file), ProjectPolicies.find(project));
    }

    @Test
    void nearestPolicyWins() throws Exception {
        repo("repo");
        policy("repo");
        Path nearer = policy("repo/services");
        assertEquals(Optional.of(nearer), ProjectPolicies.find(dirs("repo/services/api")));
    }

    @Test
    void searchStopsAtTheRepositoryRoot() throws Exception {
        policy("outside");
        repo("outside/repo");
        assertEquals(Optional.empty(), ProjectPolicies.find(dirs("outside/repo/src")));
        assertEquals(Optional.empty(), ProjectPolicies.find(root.resolve("outside/repo")));
    }

    @Test
    void aGitFileMarksTheRootToo() throws Exception {
        // A linked worktree has a .git file that points at the real git directory; what lies above it is not the
        // project's.
        policy("elsewhere");
        Files.writeString(dirs("elsewhere/wt").resolve(".git"), "gitdir: /somewhere/.git/worktrees/wt\n");
        Path own = policy("elsewhere/wt");
        assertEquals(List.of(own), ProjectPolicies.chain(dirs("elsewhere/wt/lib")));
        // A submodule's .git file inside its superproject: the superproject's policy applies too.
        Path top = policy("super");
        repo("super");
        Files.writeString(dirs("super/sub").resolve(".git"), "gitdir: ../.git/modules/sub\n");
        assertEquals(Optional.of(top), ProjectPolicies.find(dirs("super/sub/lib")));
    }

    @Test
    void withoutARepositoryOnlyTheProjectDirectoryCounts() throws Exception {
        // A directory above a project outside any repository may be anyone's (/tmp).
        Path file = policy("plain");
        assertEquals(List.of(), ProjectPolicies.chain(dirs("plain/a/b/c")));
        assertEquals(List.of(file), ProjectPolicies.chain(root.resolve("plain")));
    }

    @Test
    void everyPolicyFromTheRepositoryRootDownCountsRootFirst() throws Exception {
        policy("outside");
        repo("outside/repo");
        Path top = policy("outside/repo");
        Path services = policy("outside/repo/services");
        dirs("outside/repo/services/api/src");
        Path api = policy("outside/repo/services/api");

        assertEquals(List.of(top, services, api), ProjectPolicies.chain(root.resolve("outside/repo/services/api/src")));
        assertEquals(List.of(top, services), ProjectPolicies.chain(root.resolve("outside/repo/services")));
        assertEquals(List.of(top), ProjectPolicies.chain(root.resolve("outside/repo")));
    }

    @Test
    void noPolicyAnywhereIsEmpty() throws Exception {
        repo("repo");
        assertEquals(Optional.empty(), ProjectPolicies.find(dirs("repo/x")));
    }

    @Test
    void aDirectoryNamedLikeThePolicyIsReturnedForTheLoaderToRefuse() throws Exception {
        repo("repo");
        Path odd = dirs("repo/.agentjail.yaml");
        assertEquals(Optional.of(odd), ProjectPolicies.find(root.resolve("repo")));
    }

    @Test
    void aDanglingLinkIsReturnedForTheLoaderToRefuse() throws Exception {
        repo("repo");
        Path link = Files.createSymbolicLink(root.resolve("repo/.agentjail.yaml"), root.resolve("missing.yaml"));
        assertEquals(Optional.of(link), ProjectPolicies.find(root.resolve("repo")));
    }

    @Test
    void aSymlinkedProjectSearchesWhereItReallyLives() throws Exception {
        repo("repo");
        Path file = policy("repo");
        Path project = dirs("repo/app");
        Path link = Files.createSymbolicLink(dirs("elsewhere").resolve("app"), project);
        assertEquals(Optional.of(file), ProjectPolicies.find(link));
    }

    @Test
    void projectMustBeAnExistingDirectory() throws Exception {
        assertThrows(NoSuchFileException.class, () -> ProjectPolicies.find(root.resolve("missing")));
        Path file = Files.writeString(root.resolve("file"), "");
        assertThrows(NotDirectoryException.class, () -> ProjectPolicies.find(file));
    }

    @Test
    void aRelativeProjectPathMeansTheSameAsItsAbsolutePath() throws Exception {
        assertEquals(ProjectPolicies.find(Path.of("").toAbsolutePath()), ProjectPolicies.find(Path.of(".")));
    }
}
