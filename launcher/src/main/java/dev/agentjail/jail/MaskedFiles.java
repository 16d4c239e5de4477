package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Finds the project files that policy globs mask (such as {@code .env}); the jail binds an empty read-only file
 * over each. A glob without "/" matches a file name at any depth, one with "/" the path relative to the project.
 */
public final class MaskedFiles {
    /**
     * How deep {@link #find} looks by default. Dependency trees nest deeply (node_modules inside node_modules), and a
     * deeper tree refuses the session rather than leaving what lies below unmasked.
     */
    public static final int DEFAULT_MAX_DEPTH = 64;
    /** How many entries {@link #find} looks at by default (docs/review.md gives what a walk costs). */
    public static final int DEFAULT_MAX_ENTRIES = 200_000;

    private MaskedFiles() {}

    /**
     * Walks {@code project} (a real path) through {@link ProjectFiles}, never following a link, skipping every
     * directory named .git (git keeps its objects compressed, so no secret lies there as a file), down to {@code
     * maxDepth}. A matching link is masked at its target when that target is a regular file inside the project; a
     * target outside is not visible in the jail anyway unless another bind exposes it. A tree deeper than {@code
     * maxDepth}, or more than {@code maxEntries} entries, fails with a message naming the limit and where it was
     * reached, rather than leaving a masked file readable below it.
     */
    public static List<Path> find(Path project, List<String> globs, int maxDepth, int maxEntries) throws IOException {
        if (globs.isEmpty()) {
            return List.of();
        }
        return scan(project, globs, maxDepth, maxEntries).masked();
    }

    /**
     * What one walk of the project finds: the masked files, and the repositories nested in it ({@code .git}
     * directories and files below the top level, relative to the project), whose config and hooks the host's git runs
     * when the user works below them.
     */
    public record Scan(List<Path> masked, List<Path> nestedGit, Optional<String> incomplete) {
        public Scan {
            masked = List.copyOf(masked);
            nestedGit = List.copyOf(nestedGit);
        }
    }

    /** As {@link #find}, walking the project even without globs, and also collecting the nested repositories. */
    public static Scan scan(Path project, List<String> globs, int maxDepth, int maxEntries) throws IOException {
        List<Path> nested = new ArrayList<>();
        List<PathMatcher> byName = new ArrayList<>();
        List<PathMatcher> byPath = new ArrayList<>();
        for (String glob : globs) {
            (glob.contains("/") ? byPath : byName).add(FileSystems.getDefault().getPathMatcher("glob:" + glob));
        }
        ProjectFiles files = ProjectFiles.of(project);
        TreeSet<Path> found = new TreeSet<>();
        try {
            files.walk(Path.of(""), maxDepth, maxEntries, (relative, attributes) -> {
                boolean git = relative.getFileName().toString().equals(".git");
                if (git && relative.getNameCount() > 1 && (attributes.isDirectory() || attributes.isRegularFile())) {
                    nested.add(relative);
                }
                if (attributes.isDirectory()) {
                    boolean maskedDir = byName.stream().anyMatch(m -> m.matches(relative.getFileName()))
                            || byPath.stream().anyMatch(m -> m.matches(relative));
                    if (maskedDir && !git) {
                        throw new IOException("filesystem.mask matches the directory " + project.resolve(relative)
                                + ", and a mask hides files: mask what is inside it (\"" + relative + "/**\") instead");
                    }
                    return git ? ProjectFiles.Visit.SKIP_SUBTREE : ProjectFiles.Visit.CONTINUE;
                }
                boolean matches = byName.stream().anyMatch(m -> m.matches(relative.getFileName()))
                        || byPath.stream().anyMatch(m -> m.matches(relative));
                if (matches && attributes.isRegularFile()) {
                    found.add(project.resolve(relative));
                } else if (matches && attributes.isSymbolicLink()) {
                    linkTarget(files, relative).ifPresent(t -> found.add(project.resolve(t)));
                }
                return ProjectFiles.Visit.CONTINUE;
            });
        } catch (WalkLimitException e) {
            if (globs.isEmpty()) {
                // Nothing is masked: a tree too large to walk only leaves repositories past the bound unprotected
                // during the session (the session-end review reports its own bound); the caller warns.
                return new Scan(List.of(), nested, Optional.of(e.getMessage()));
            }
            throw new IOException(
                    "cannot check the project for masked files (filesystem.mask): " + e.getMessage()
                            + "; the jail does not start rather than leave a masked file readable beyond the "
                            + e.bound().limitName() + ". Move that tree out of the project, or remove it",
                    e);
        } catch (LinkInPathException e) {
            throw new IOException(
                    "cannot check the project for masked files (filesystem.mask): " + e.getMessage()
                            + " (it changed while it was walked); try again once nothing else rearranges the project",
                    e);
        }
        return new Scan(List.copyOf(found), nested, Optional.empty());
    }

    /** The regular file inside the project that a link leads to, if any. */
    private static Optional<Path> linkTarget(ProjectFiles files, Path link) throws IOException {
        Optional<Path> target = files.resolveLink(link);
        if (target.isEmpty() || target.get().toString().isEmpty()) {
            return Optional.empty();
        }
        Optional<PosixFileAttributes> attributes = files.attributes(target.get());
        return attributes.isPresent() && attributes.get().isRegularFile() ? target : Optional.empty();
    }
}
