package dev.agentjail.jail.audit;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * How a record names a path of the jail (docs/audit-log.md "Inside the jail"): joined to the directory the caller's
 * relative path starts from, made lexically normal, then relative for the project, {@code ~/...} for the jail's home,
 * absolute elsewhere. Lexical only: nothing is looked up on disk, so a path through a symbolic link is named as the
 * caller wrote it.
 */
final class PathView {
    private final Path project;
    private final Path home;

    PathView(Path project, Path home) {
        this.project = project.normalize();
        this.home = home.normalize();
    }

    /** The absolute form of {@code given}, joined to {@code base} when relative; {@code given} itself when odd. */
    static String absolute(String given, String base) {
        if (given == null || given.isEmpty() || given.equals("?")) {
            return given == null ? "?" : given;
        }
        try {
            Path path = Path.of(given);
            if (!path.isAbsolute()) {
                if (base == null || !base.startsWith("/")) {
                    return given;
                }
                path = Path.of(base).resolve(path);
            }
            return path.normalize().toString();
        } catch (InvalidPathException e) {
            // A NUL cannot reach here (the supervisor stops at it); anything else odd is named as given.
            return given;
        }
    }

    /** {@code given} (joined to {@code base}) as a record names it. */
    String view(String given, String base) {
        String absolute = absolute(given, base);
        if (!absolute.startsWith("/")) {
            return absolute;
        }
        Path path = Path.of(absolute);
        if (path.startsWith(project)) {
            Path relative = project.relativize(path);
            return relative.toString().isEmpty() ? "." : relative.toString();
        }
        if (path.startsWith(home)) {
            Path relative = home.relativize(path);
            return relative.toString().isEmpty() ? "~" : "~/" + relative;
        }
        return absolute;
    }

    /** The directory a record's path is in, as records name directories (with a trailing {@code /}). */
    static String directoryOf(String view) {
        int slash = view.lastIndexOf('/');
        if (slash < 0) {
            return "./";
        }
        return view.substring(0, slash + 1);
    }
}
