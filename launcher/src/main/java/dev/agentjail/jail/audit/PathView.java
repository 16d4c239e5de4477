package dev.agentjail.jail.audit;

import java.nio.file.Path;

/**
 * How a record names a path of the jail (docs/audit-log.md "Inside the jail"): joined to the directory the caller's
 * relative path starts from, without {@code .} and repeated slashes, then relative for the project, {@code ~/...} for
 * the jail's home, absolute elsewhere. Text only: nothing is looked up on disk, so a path through a symbolic link is
 * named as the caller wrote it, and {@code ..} stays, because after a link it names another directory than dropping a
 * component would (with {@code sub} a link to {@code a/b}, {@code sub/../x} is {@code a/x}, not {@code x}).
 */
final class PathView {
    private final Path project;
    private final Path home;

    PathView(Path project, Path home) {
        this.project = project.normalize();
        this.home = home.normalize();
    }

    /** What a relative path starts from when its directory could not be read (a path longer than 4,096 bytes). */
    static final String UNKNOWN_BASE = "?/";

    /**
     * The absolute form of {@code given}, joined to {@code base} when relative; {@code ?/given} when the supervisor sent
     * a base it could not read (empty, or not absolute), never the bare relative text, which would read as a path in
     * the project; {@code given} itself when there is no base (a descriptor's name, an abstract socket) or it is odd.
     */
    static String absolute(String given, String base) {
        // "?" alone is the supervisor's word for a path it could not read, which comes without a base; with one, it is
        // a file named ?.
        if (given == null || given.isEmpty() || (given.equals("?") && base == null)) {
            return given == null ? "?" : given;
        }
        // As text, as Path.resolve and the walk below would join them (a Path would also depend on the locale's
        // encoding, and cost a quarter of an exec record's work: docs/benchmarks.md run 29).
        if (given.indexOf('\0') >= 0) {
            return given; // the supervisor stops at a NUL: none can reach here
        }
        if (given.charAt(0) == '/') {
            return withoutDots(given);
        }
        if (base == null) {
            return given;
        }
        if (!base.startsWith("/")) {
            return UNKNOWN_BASE + given;
        }
        return withoutDots(base + '/' + given);
    }

    /** An absolute path without {@code .} components and repeated slashes; {@code ..} kept. */
    private static String withoutDots(String absolute) {
        if (clean(absolute)) {
            return absolute;
        }
        StringBuilder out = new StringBuilder(absolute.length());
        for (String part : absolute.split("/")) {
            if (!part.isEmpty() && !part.equals(".")) {
                out.append('/').append(part);
            }
        }
        return out.isEmpty() ? "/" : out.toString();
    }

    /** Whether {@code absolute} is already as {@link #withoutDots} makes it: {@code /}, or no empty or {@code .} part. */
    private static boolean clean(String absolute) {
        int n = absolute.length();
        if (n == 1) {
            return true;
        }
        if (absolute.charAt(n - 1) == '/') {
            return false;
        }
        for (int i = absolute.indexOf('/'); i >= 0; i = absolute.indexOf('/', i + 1)) {
            char next = absolute.charAt(i + 1);
            if (next == '/' || (next == '.' && (i + 2 == n || absolute.charAt(i + 2) == '/'))) {
                return false;
            }
        }
        return true;
    }

    /** {@code given} (joined to {@code base}) as a record names it. */
    String view(String given, String base) {
        String absolute = absolute(given, base);
        if (!absolute.startsWith("/")) {
            return absolute;
        }
        // As text: Path.relativize would drop the .. components this view keeps.
        String inProject = beneath(absolute, project.toString());
        if (inProject != null) {
            if (inProject.isEmpty()) {
                return ".";
            }
            // A project directory named ~ (or ?, or a file *) is not the home, an unknown directory or a fold.
            boolean likeAMark = inProject.startsWith("~") || inProject.startsWith("?") || inProject.startsWith("*");
            return likeAMark ? "./" + inProject : inProject;
        }
        String inHome = beneath(absolute, home.toString());
        if (inHome != null) {
            return inHome.isEmpty() ? "~" : "~/" + inHome;
        }
        return absolute;
    }

    /** {@code path} relative to {@code dir} when it is {@code dir} or beneath it by its text; else null. */
    private static String beneath(String path, String dir) {
        if (path.equals(dir)) {
            return "";
        }
        String prefix = dir.endsWith("/") ? dir : dir + "/";
        return path.startsWith(prefix) ? path.substring(prefix.length()) : null;
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
