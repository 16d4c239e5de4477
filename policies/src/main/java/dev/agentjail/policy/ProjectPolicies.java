package dev.agentjail.policy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Optional;

/** Finds a project's policy file, {@code .agentjail.yaml}, the way git finds its repository. */
public final class ProjectPolicies {
    public static final String FILE_NAME = ".agentjail.yaml";

    private ProjectPolicies() {}

    /**
     * Looks for {@value #FILE_NAME} in {@code projectDir} and its parents, stopping after the
     * repository root (the first directory that holds a {@code .git} directory or file) or, outside a
     * repository, at the file-system root. The search runs on the real path, so a symlinked project
     * directory finds the policy of the repository it really lives in.
     *
     * <p>Anything named {@value #FILE_NAME} counts, also a directory or a dangling link: the loader
     * then refuses it, which is better than silently falling back to a policy further up or to none.
     *
     * @throws IOException if {@code projectDir} does not exist or is not a directory
     */
    public static Optional<Path> find(Path projectDir) throws IOException {
        Path dir = projectDir.toRealPath();
        if (!Files.isDirectory(dir)) {
            throw new NotDirectoryException(projectDir.toString());
        }
        for (Path current = dir; current != null; current = current.getParent()) {
            Path candidate = current.resolve(FILE_NAME);
            if (Files.exists(candidate, LinkOption.NOFOLLOW_LINKS)) {
                return Optional.of(candidate);
            }
            if (Files.exists(current.resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }
}
