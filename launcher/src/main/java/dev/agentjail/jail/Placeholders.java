package dev.agentjail.jail;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Removes, after the jail has exited, the placeholders bwrap created on the host for missing protected paths, through
 * {@link ProjectFiles}: a placeholder or a parent of it that the agent replaced by a link is never followed.
 */
public final class Placeholders {
    private Placeholders() {}

    /**
     * Deletes each placeholder of {@code paths} ({@link ProtectedPaths#resolve}'s answer) that is still an empty file
     * or directory of the kind bwrap made, deepest first, and returns those it left in place because they hold
     * something now (or are something else: a link is kept, not followed). A placeholder whose parent became a link
     * is left alone too; after trying every one, the first such failure is thrown, the others added as suppressed.
     */
    public static List<Path> remove(Path project, List<ProtectedPath> paths) throws IOException {
        ProjectFiles files = ProjectFiles.of(project);
        List<ProtectedPath> deepestFirst = new ArrayList<>(paths);
        deepestFirst.sort(
                Comparator.comparingInt((ProtectedPath p) -> p.relative().getNameCount())
                        .reversed());
        List<Path> kept = new ArrayList<>();
        IOException failed = null;
        for (ProtectedPath p : deepestFirst) {
            ProjectFiles.Type type = switch (p.state()) {
                case EXISTS, PIN, REPLACED, STAGED -> null;
                case MISSING_FILE -> ProjectFiles.Type.FILE;
                case MISSING_DIR -> ProjectFiles.Type.DIRECTORY;
            };
            if (type == null) {
                continue;
            }
            try {
                if (files.deleteIfEmpty(p.relative(), type) == ProjectFiles.Removal.KEPT) {
                    kept.add(project.resolve(p.relative()));
                }
            } catch (IOException e) {
                IOException named = new IOException(
                        "cannot remove the placeholder " + p.relative() + " in " + project + ": " + IoErrors.message(e),
                        e);
                if (failed == null) {
                    failed = named;
                } else {
                    failed.addSuppressed(named);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
        return List.copyOf(kept);
    }
}
