package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A host path that a policy binds into the jail: {@code ~/...} under the user's home, or an absolute
 * path. Canonical: no empty, {@code .} or {@code ..} segments and no trailing slash, so two entries
 * naming the same path are equal.
 *
 * <p>Neither the home directory itself nor {@code /} can be named, because either would expose the
 * credentials the jail hides; {@code /proc} and {@code /dev} are refused because the jail mounts its
 * own.
 */
public record HostPath(Anchor anchor, Path path) {
    /** What {@code path} is relative to. */
    public enum Anchor {
        /** {@code path} is relative and lies under the user's home ({@code ~/}). */
        HOME,
        /** {@code path} is absolute. */
        ROOT
    }

    private static final List<String> JAIL_MOUNTS = List.of("proc", "dev");

    public HostPath {
        Objects.requireNonNull(anchor, "anchor");
        Objects.requireNonNull(path, "path");
        if (path.isAbsolute() != (anchor == Anchor.ROOT)) {
            throw new IllegalArgumentException(
                    anchor == Anchor.ROOT ? "path must be absolute" : "path must be relative to the home directory");
        }
        List<String> segments = new ArrayList<>();
        path.forEach(name -> segments.add(name.toString()));
        Optional<String> problem = problem(anchor, segments);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get() + ": " + path);
        }
    }

    /** Parses a policy entry: {@code ~/relative/path} or {@code /absolute/path}. */
    public static HostPath parse(String text) throws MalformedEntryException {
        Objects.requireNonNull(text, "text");
        if (text.isEmpty()) {
            throw new MalformedEntryException("empty path");
        }
        if (Quoting.hasControl(text)) {
            throw new MalformedEntryException("NUL and other control characters are not allowed");
        }
        Anchor anchor;
        String rest;
        if (text.equals("~") || text.startsWith("~/")) {
            anchor = Anchor.HOME;
            rest = text.substring(1);
        } else if (text.startsWith("/")) {
            anchor = Anchor.ROOT;
            rest = text;
        } else if (text.startsWith("~")) {
            throw new MalformedEntryException("'~user' is not supported; write '~/' for your own home");
        } else {
            throw new MalformedEntryException("must be absolute or start with '~/'");
        }
        List<String> segments = new ArrayList<>();
        for (String segment : rest.split("/", -1)) {
            // Doubled and trailing slashes and '.' change nothing; they are dropped to make the path canonical.
            if (!segment.isEmpty() && !segment.equals(".")) {
                segments.add(segment);
            }
        }
        Optional<String> problem = problem(anchor, segments);
        if (problem.isPresent()) {
            throw new MalformedEntryException(problem.get());
        }
        return anchor == Anchor.HOME
                ? new HostPath(anchor, Path.of("", segments.toArray(String[]::new)))
                : new HostPath(anchor, Path.of("/", segments.toArray(String[]::new)));
    }

    /** A path under the home directory, for built-in lists; {@code relative} must be canonical. */
    static HostPath inHome(String relative) {
        return new HostPath(Anchor.HOME, Path.of(relative));
    }

    /** The canonical text: {@code ~/.cache/pip} or {@code /opt/tools}. */
    public String text() {
        return anchor == Anchor.HOME ? "~/" + path : path.toString();
    }

    /** The absolute host path, given the user's (absolute) home directory. */
    public Path resolve(Path home) {
        if (!home.isAbsolute()) {
            throw new IllegalArgumentException("home must be absolute: " + home);
        }
        return anchor == Anchor.HOME ? home.resolve(path) : path;
    }

    private static Optional<String> problem(Anchor anchor, List<String> segments) {
        if (segments.isEmpty()) {
            return Optional.of(
                    anchor == Anchor.HOME
                            ? "'~' alone would expose the whole home directory"
                            : "'/' would expose the whole file system");
        }
        for (String segment : segments) {
            if (segment.equals("..")) {
                return Optional.of("'..' is not allowed");
            }
            if (segment.isEmpty() || segment.equals(".")) {
                return Optional.of("not canonical (empty or '.' segment)");
            }
            if (Quoting.hasControl(segment)) {
                return Optional.of("NUL and other control characters are not allowed");
            }
        }
        if (anchor == Anchor.ROOT && JAIL_MOUNTS.contains(segments.get(0))) {
            return Optional.of("'/" + segments.get(0) + "' is mounted by the jail itself");
        }
        return Optional.empty();
    }
}
