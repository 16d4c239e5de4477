package dev.agentjail.policy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the policy files of a project, {@code .agentjail.yaml}: one policy per project, from the repository root down
 * to the directory a session starts in, so that a file in a subdirectory adds to the root's policy (and can never lift
 * its denies) instead of replacing it.
 */
public final class ProjectPolicies {
    public static final String FILE_NAME = ".agentjail.yaml";

    private ProjectPolicies() {}

    /**
     * The project policy files that apply to {@code projectDir}, most general first: every {@value #FILE_NAME} from the
     * repository root (the outermost directory at or above {@code projectDir} that holds a repository's {@code .git}:
     * a submodule or a nested repository belongs to the project around it) down to {@code projectDir}. Outside a repository only {@code projectDir}'s own file counts: a directory
     * above it may be anyone's ({@code /tmp}). The walk runs on the real path, so a symlinked project directory finds
     * the policy of the repository it really lives in.
     *
     * <p>Anything named {@value #FILE_NAME} counts, also a directory or a dangling link: the loader then refuses it,
     * which is better than silently falling back to a policy further up or to none.
     *
     * @throws IOException if {@code projectDir} does not exist or is not a directory
     */
    public static List<Path> chain(Path projectDir) throws IOException {
        Path dir = projectDir.toRealPath();
        if (!Files.isDirectory(dir)) {
            throw new NotDirectoryException(projectDir.toString());
        }
        // The outermost repository: a repository inside it (a submodule, a nested clone, or one an agent made to cut
        // the root's policy off) is part of the same project.
        Path top = dir;
        for (Path current = dir; current != null; current = current.getParent()) {
            if (isRepository(current.resolve(".git"))) {
                top = current;
            }
        }
        List<Path> files = new ArrayList<>();
        for (Path current = dir; ; current = current.getParent()) {
            Path candidate = current.resolve(FILE_NAME);
            if (Files.exists(candidate, LinkOption.NOFOLLOW_LINKS)) {
                files.add(candidate);
            }
            if (current.equals(top)) {
                break;
            }
        }
        Collections.reverse(files);
        return List.copyOf(files);
    }

    /**
     * Whether {@code dotGit} makes its directory a repository's top, as git itself decides: a directory with a {@code
     * HEAD} and an object store (its own {@code objects}, or a {@code commondir} naming another), or a file starting
     * with {@code gitdir:} (a linked worktree or a submodule). An empty {@code .git} (such as the read-only placeholder
     * a session puts in a project without one) is none, so it cannot cut the repository root's policy off.
     */
    static boolean isRepository(Path dotGit) {
        if (Files.isDirectory(dotGit, LinkOption.NOFOLLOW_LINKS)) {
            return Files.exists(dotGit.resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)
                    && (Files.isDirectory(dotGit.resolve("objects"), LinkOption.NOFOLLOW_LINKS)
                            || Files.exists(dotGit.resolve("commondir"), LinkOption.NOFOLLOW_LINKS));
        }
        if (Files.isRegularFile(dotGit, LinkOption.NOFOLLOW_LINKS)) {
            try (java.io.InputStream in = Files.newInputStream(dotGit)) {
                return new String(in.readNBytes(7), java.nio.charset.StandardCharsets.UTF_8).equals("gitdir:");
            } catch (IOException e) {
                return false; // Unreadable: walk on, which reads more policy files (their denies too), not fewer.
            }
        }
        return false;
    }

    /** The nearest of {@link #chain}'s files: the one a session's own directory holds, or the closest above it. */
    public static Optional<Path> find(Path projectDir) throws IOException {
        List<Path> chain = chain(projectDir);
        return chain.isEmpty() ? Optional.empty() : Optional.of(chain.get(chain.size() - 1));
    }

    /**
     * Why a project policy file may not be used, if it may not: one owned by neither the user running agentjail, nor
     * root, nor the owner of the project directory (the user a root-started session runs as), or one that anybody may
     * write. Git refuses such repositories for the same reason ({@code safe.directory}): another local user could have
     * put it there. Links are judged by their target; one that cannot be read is left to the loader's error.
     */
    static Optional<String> ownershipProblem(Path file, Set<Integer> owners) {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, PosixFileAttributes.class);
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
        if (attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            return Optional.of("any local user can write it (mode "
                    + java.nio.file.attribute.PosixFilePermissions.toString(attributes.permissions())
                    + "); agentjail reads no project policy that others can change: chmod o-w it");
        }
        int uid;
        try {
            uid = (Integer) Files.getAttribute(file, "unix:uid");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return Optional.empty();
        }
        if (!owners.contains(uid)) {
            return Optional.of("it belongs to uid " + uid + ", neither you, root nor the project's owner; another"
                    + " local user could have put it there: check it and chown it to yourself");
        }
        return Optional.empty();
    }

    /** The users whose project policy files are read for {@code projectDir}: this process's, root, the directory's. */
    static Set<Integer> owners(Optional<Path> projectDir) {
        Set<Integer> owners = new java.util.HashSet<>();
        owners.add(0);
        try {
            owners.add((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            // Without /proc the check below is only the stricter for it.
        }
        if (projectDir.isPresent()) {
            try {
                owners.add((Integer) Files.getAttribute(projectDir.get(), "unix:uid"));
            } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
                // A project that cannot be stat'ed fails to load later anyway.
            }
        }
        return Set.copyOf(owners);
    }
}
