package dev.agentjail.jail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The git repositories whose working trees lie in the project: the project's own, and each nested one, with the
 * directory git keeps its metadata in. That directory is {@code .git}, or, for a {@code .git} file (a submodule, a
 * linked worktree, {@code git init --separate-git-dir}), the one its {@code gitdir:} line names, which may be anywhere
 * in the project under any name, or outside it.
 */
public final class Repositories {
    /** How many repositories a project may hold before the session refuses to start unchecked. */
    public static final int MAX_REPOSITORIES = 256;

    private static final int MAX_GITFILE_BYTES = 4096;

    /**
     * One repository.
     *
     * @param worktree the top of its working tree (absolute), where git runs its hooks and relative commands
     * @param gitDir its metadata directory (absolute, normalized); may not exist
     * @param gitFile the {@code .git} file that names {@code gitDir}, if that is how it is found
     */
    public record Repository(Path worktree, Path gitDir, Optional<Path> gitFile) {}

    private Repositories() {}

    /** The project's repository (if it has a {@code .git}) and those at {@code nestedGit} (relative .git paths). */
    public static List<Repository> find(Path project, List<Path> nestedGit) throws IOException {
        List<Path> gits = new ArrayList<>();
        gits.add(Path.of(".git"));
        gits.addAll(nestedGit);
        if (gits.size() > MAX_REPOSITORIES) {
            throw new IOException("more than " + MAX_REPOSITORIES + " git repositories in " + project
                    + "; the jail does not start with repository metadata it did not check");
        }
        List<Repository> repositories = new ArrayList<>();
        for (Path git : gits) {
            Path path = project.resolve(git);
            Path worktree = path.getParent();
            if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                repositories.add(new Repository(worktree, path, Optional.empty()));
            } else if (Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
                gitDirOf(path).ifPresent(dir -> repositories.add(new Repository(worktree, dir, Optional.of(path))));
            }
        }
        return List.copyOf(repositories);
    }

    /** The directory a {@code .git} file names ({@code gitdir: PATH}, relative to the file's directory). */
    static Optional<Path> gitDirOf(Path gitFile) throws IOException {
        if (Files.size(gitFile) > MAX_GITFILE_BYTES) {
            return Optional.empty();
        }
        for (String line : new String(Files.readAllBytes(gitFile), StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("gitdir:")) {
                String value = line.substring("gitdir:".length()).strip();
                if (!value.isEmpty()) {
                    return Optional.of(gitFile.getParent().resolve(value).normalize());
                }
            }
        }
        return Optional.empty();
    }
}
