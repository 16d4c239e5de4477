package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds out, before the jail starts, how each write-protected project path has to be covered: bound read-only
 * if it exists, or blocked by a read-only placeholder at its first missing component if it does not, so that
 * the agent can neither change nor create it (a new {@code .git/hooks/post-checkout} runs on the host).
 */
public final class ProtectedPaths {
    /**
     * The default list. A trailing "/" marks a directory; a "*" may appear in the last component and matches
     * existing entries only, which is why the two Claude settings files are also listed by name.
     */
    public static final List<String> DEFAULTS = List.of(
            ".git/hooks/",
            ".git/config",
            ".gitmodules",
            ".gitconfig",
            ".bashrc",
            ".bash_profile",
            ".bash_login",
            ".profile",
            ".zshrc",
            ".zshenv",
            ".zprofile",
            ".zlogin",
            ".mcp.json",
            ".envrc",
            ".vscode/",
            ".idea/",
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".claude/settings*.json",
            ".claude/commands/",
            ".claude/agents/",
            ".agentjail.yaml");

    private ProtectedPaths() {}

    /**
     * Resolves the patterns against {@code project} (a real path). Fails when a protected path or one of its
     * parents below the project is a symlink: bwrap would mount over the link's target, and the agent could
     * replace the link itself.
     */
    public static List<ProtectedPath> resolve(Path project, List<String> patterns) throws IOException {
        Map<Path, ProtectedPath> found = new LinkedHashMap<>();
        for (String pattern : patterns) {
            boolean directory = pattern.endsWith("/");
            Path relative = JailPaths.relative(
                    Path.of(directory ? pattern.substring(0, pattern.length() - 1) : pattern), "protected path");
            String last = relative.getFileName().toString();
            if (last.contains("*")) {
                resolveGlob(project, relative, found);
            } else {
                resolveOne(project, relative, directory, found, true);
            }
        }
        List<ProtectedPath> result = new ArrayList<>(found.values());
        // Parents before children: a later bind of a parent must not cover a child's read-only mount.
        result.sort(Comparator.comparingInt(p -> p.relative().getNameCount()));
        return List.copyOf(result);
    }

    /**
     * Removes the placeholders bwrap created on the host for missing paths, if they are still empty; call it
     * after the jail has exited. Returns those it left in place (someone on the host put content there).
     */
    public static List<Path> removePlaceholders(Path project, List<ProtectedPath> paths) throws IOException {
        List<Path> kept = new ArrayList<>();
        List<ProtectedPath> deepestFirst = new ArrayList<>(paths);
        deepestFirst.sort(
                Comparator.comparingInt((ProtectedPath p) -> p.relative().getNameCount())
                        .reversed());
        for (ProtectedPath p : deepestFirst) {
            Path path = project.resolve(p.relative());
            boolean removable = switch (p.state()) {
                case EXISTS -> false;
                case MISSING_FILE -> Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) && Files.size(path) == 0;
                case MISSING_DIR -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) && isEmpty(path);
            };
            if (removable) {
                Files.delete(path);
            } else if (p.state() != ProtectedPath.State.EXISTS && Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                kept.add(path);
            }
        }
        return List.copyOf(kept);
    }

    private static void resolveOne(
            Path project, Path relative, boolean directory, Map<Path, ProtectedPath> found, boolean protectIfPresent)
            throws IOException {
        for (int i = 1; i <= relative.getNameCount(); i++) {
            Path prefix = relative.subpath(0, i);
            Path path = project.resolve(prefix);
            if (Files.isSymbolicLink(path)) {
                throw new IOException("protected path " + prefix + " in " + project
                        + " is a symlink; bwrap cannot make a link read-only, so remove it or unprotect it");
            }
            if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                // Blocking the first missing component also blocks everything the agent could create below it.
                boolean file = i == relative.getNameCount() && !directory;
                found.putIfAbsent(
                        prefix,
                        new ProtectedPath(
                                prefix, file ? ProtectedPath.State.MISSING_FILE : ProtectedPath.State.MISSING_DIR));
                return;
            }
        }
        if (protectIfPresent) {
            found.putIfAbsent(relative, new ProtectedPath(relative, ProtectedPath.State.EXISTS));
        }
    }

    private static void resolveGlob(Path project, Path relative, Map<Path, ProtectedPath> found) throws IOException {
        Path parent = relative.getParent();
        if (parent != null) {
            // Only checks the parent (and blocks it if missing): an existing parent stays writable.
            resolveOne(project, parent, true, found, false);
            if (!Files.isDirectory(project.resolve(parent), LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
        }
        Path dir = parent == null ? project : project.resolve(parent);
        try (DirectoryStream<Path> matches =
                Files.newDirectoryStream(dir, relative.getFileName().toString())) {
            for (Path match : matches) {
                resolveOne(project, project.relativize(match), false, found, true);
            }
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            return !entries.iterator().hasNext();
        }
    }
}
