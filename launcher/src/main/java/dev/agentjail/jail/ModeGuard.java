package dev.agentjail.jail;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Takes back group and other write permission the agent gave the project's protected paths and their directories.
 * A jail that root starts for a root-owned project runs as kernel uid 0 and owns every file there: {@code chmod 0777
 * .git} works from inside, and after the session another local user could rewrite {@code .git/config}, which root's
 * next {@code git status} runs. Nothing the agent does can be undone while it runs, so this runs after the jail has
 * exited (its pid namespace is gone with it: no process of the agent is left to race).
 */
public final class ModeGuard {
    private static final int GROUP_OTHER_WRITE = 0022;

    private final Map<Path, Integer> before;
    private final Path project;
    /** Entries of the project that were already group or other writable (relative), or null: not walked. */
    private final Set<Path> openBefore;

    private final int maxEntries;

    /** Why {@link #restore} could not look at every entry, if it could not. */
    private Optional<String> incomplete = Optional.empty();

    private ModeGuard(Map<Path, Integer> before, Path project, Set<Path> openBefore, int maxEntries) {
        this.before = before;
        this.project = project;
        this.openBefore = openBefore;
        this.maxEntries = maxEntries;
    }

    /**
     * As {@link #record}, and walks the whole project (up to {@code maxEntries}, following no link) for what is already
     * group or other writable, so that {@link #restore} takes the bits back from every file and directory that gained
     * them: a root-owned {@code Makefile}, {@code src/} or {@code .git/refs} made 0777 lets another local user change
     * what root builds or checks out next.
     */
    public static ModeGuard recordTree(Path project, List<ProtectedPath> paths, int maxEntries) throws IOException {
        Set<Path> open = new HashSet<>();
        ProjectFiles.of(project).walk(Path.of(""), Integer.MAX_VALUE / 2, maxEntries, (relative, attributes) -> {
            if (!attributes.isSymbolicLink() && (mode(attributes) & GROUP_OTHER_WRITE) != 0) {
                open.add(relative);
            }
            return ProjectFiles.Visit.CONTINUE;
        });
        return new ModeGuard(record(project, paths).before, project, open, maxEntries);
    }

    private static int mode(PosixFileAttributes attributes) {
        int mode = 0;
        for (PosixFilePermission p : attributes.permissions()) {
            mode |= 0400 >> p.ordinal();
        }
        return mode;
    }

    /** Records the modes of the project itself and of each protected path and pin that exists. */
    public static ModeGuard record(Path project, List<ProtectedPath> paths) {
        Map<Path, Integer> modes = new LinkedHashMap<>();
        mode(project).ifPresent(m -> modes.put(project, m));
        for (ProtectedPath p : paths) {
            if (p.state() == ProtectedPath.State.EXISTS
                    || p.state() == ProtectedPath.State.PIN
                    || p.state() == ProtectedPath.State.STAGED) {
                Path path = project.resolve(p.relative());
                mode(path).ifPresent(m -> modes.put(path, m));
            }
        }
        return new ModeGuard(modes, project, null, 0);
    }

    /**
     * Removes the group and other write bits that were not there before from each recorded path that is still the
     * same kind of entry (never following a link), and returns the paths it changed.
     */
    public List<Path> restore() {
        List<Path> restored = new ArrayList<>();
        for (Map.Entry<Path, Integer> e : before.entrySet()) {
            Path path = e.getKey();
            Optional<Integer> now = mode(path);
            if (now.isEmpty() || Files.isSymbolicLink(path)) {
                continue;
            }
            int added = now.get() & ~e.getValue() & GROUP_OTHER_WRITE;
            if (added == 0) {
                continue;
            }
            try {
                Files.setPosixFilePermissions(path, permissions(now.get() & ~added));
                restored.add(path);
            } catch (IOException ignored) {
                // Reported by the caller as not restored: the path stays in the list only when the change worked.
            }
        }
        if (openBefore != null) {
            restoreTree(restored);
        }
        return List.copyOf(restored);
    }

    /** Why the last {@link #restore} could not look at every entry of the project, if it could not. */
    public Optional<String> incomplete() {
        return incomplete;
    }

    private void restoreTree(List<Path> restored) {
        try {
            ProjectFiles.of(project)
                    .walk(Path.of(""), Integer.MAX_VALUE / 2, maxEntries * 2, (relative, attributes) -> {
                        int mode = mode(attributes);
                        if (!attributes.isSymbolicLink()
                                && (attributes.isDirectory() || attributes.isRegularFile())
                                && (mode & GROUP_OTHER_WRITE) != 0
                                && !openBefore.contains(relative)) {
                            Path path = project.resolve(relative);
                            Files.setPosixFilePermissions(path, permissions(mode & ~GROUP_OTHER_WRITE));
                            restored.add(path);
                        }
                        return ProjectFiles.Visit.CONTINUE;
                    });
        } catch (IOException e) {
            incomplete = Optional.of(IoErrors.message(e));
        }
    }

    private static Optional<Integer> mode(Path path) {
        try {
            return Optional.of((Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777);
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        StringBuilder s = new StringBuilder();
        String letters = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            s.append((mode & (0400 >> i)) != 0 ? letters.charAt(i) : '-');
        }
        return PosixFilePermissions.fromString(s.toString());
    }
}
