package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.TreeSet;

/**
 * Finds the project files that policy globs mask (such as {@code .env}); the jail binds an empty read-only file
 * over each. A glob without "/" matches a file name at any depth, one with "/" the path relative to the project.
 */
public final class MaskedFiles {
    private MaskedFiles() {}

    /**
     * Walks {@code project} (a real path) without following symlinks, skipping .git, down to {@code maxDepth}.
     * A matching symlink is masked at its target when that target lies inside the project; a target outside is
     * not visible in the jail anyway unless another bind exposes it. Fails when more than {@code maxEntries}
     * entries would have to be looked at, rather than silently leaving secrets unmasked.
     */
    public static List<Path> find(Path project, List<String> globs, int maxDepth, int maxEntries) throws IOException {
        if (globs.isEmpty()) {
            return List.of();
        }
        List<PathMatcher> byName = new ArrayList<>();
        List<PathMatcher> byPath = new ArrayList<>();
        for (String glob : globs) {
            (glob.contains("/") ? byPath : byName).add(FileSystems.getDefault().getPathMatcher("glob:" + glob));
        }
        TreeSet<Path> found = new TreeSet<>();
        int[] seen = {0};
        Files.walkFileTree(project, EnumSet.noneOf(FileVisitOption.class), maxDepth, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                count();
                return dir.getFileName() != null && dir.getFileName().toString().equals(".git")
                        ? FileVisitResult.SKIP_SUBTREE
                        : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                count();
                Path relative = project.relativize(file);
                boolean matches = byName.stream().anyMatch(m -> m.matches(file.getFileName()))
                        || byPath.stream().anyMatch(m -> m.matches(relative));
                if (matches && attrs.isRegularFile()) {
                    found.add(file);
                } else if (matches && attrs.isSymbolicLink()) {
                    Path target = realTarget(file);
                    if (target != null && target.startsWith(project) && Files.isRegularFile(target)) {
                        found.add(target);
                    }
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                // Only a race (an entry deleted while we walk) or a directory we cannot read: neither hides a file.
                return FileVisitResult.CONTINUE;
            }

            private void count() throws IOException {
                if (++seen[0] > maxEntries) {
                    throw new IOException(
                            "more than " + maxEntries + " entries in " + project + " to search for masked files");
                }
            }
        });
        return List.copyOf(found);
    }

    private static Path realTarget(Path link) {
        try {
            return link.toRealPath();
        } catch (IOException dangling) {
            return null;
        }
    }
}
