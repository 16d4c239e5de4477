package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A glob over paths relative to the project directory, for {@code filesystem.mask} and {@code
 * filesystem.protected}. Always anchored at the project directory: {@code .env} is only the
 * top-level file, {@code **}{@code /.env} is every {@code .env}.
 *
 * <p>{@code *} matches any run of characters within one segment (dot files included), {@code ?} one
 * character, and a {@code **} segment zero or more whole segments. Character classes, braces,
 * escapes and negation are refused rather than half-supported. A trailing {@code /} is dropped by
 * {@link #parse}.
 */
public record ProjectGlob(String pattern) {
    public ProjectGlob {
        Objects.requireNonNull(pattern, "pattern");
        Optional<String> problem = problem(pattern);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get() + ": " + pattern);
        }
    }

    /** Parses a policy entry; a single trailing {@code /} is allowed and dropped. */
    public static ProjectGlob parse(String text) throws MalformedEntryException {
        Objects.requireNonNull(text, "text");
        String pattern = text.endsWith("/") && text.length() > 1 ? text.substring(0, text.length() - 1) : text;
        Optional<String> problem = problem(pattern);
        if (problem.isPresent()) {
            throw new MalformedEntryException(problem.get());
        }
        return new ProjectGlob(pattern);
    }

    /** Whether the pattern has no wildcard, so that it names exactly one path. */
    public boolean isLiteral() {
        return pattern.indexOf('*') < 0 && pattern.indexOf('?') < 0;
    }

    /** Whether a path relative to the project directory matches. */
    public boolean matches(Path relative) {
        if (relative.isAbsolute()) {
            throw new IllegalArgumentException("expected a path relative to the project directory: " + relative);
        }
        List<String> segments = new ArrayList<>();
        if (!relative.toString().isEmpty()) {
            relative.forEach(name -> segments.add(name.toString()));
        }
        return matches(segments);
    }

    /** Whether a {@code /}-separated path relative to the project directory matches. */
    public boolean matches(String relative) {
        return matches(relative.isEmpty() ? List.of() : List.of(relative.split("/", -1)));
    }

    /** Dynamic programming over (pattern segment, path segment), so many {@code **} stay linear-ish. */
    private boolean matches(List<String> path) {
        String[] globs = pattern.split("/", -1);
        // reachable[j]: the globs consumed so far can match exactly the first j path segments.
        boolean[] reachable = new boolean[path.size() + 1];
        reachable[0] = true;
        for (String glob : globs) {
            boolean[] next = new boolean[path.size() + 1];
            for (int j = 0; j <= path.size(); j++) {
                if (!reachable[j]) {
                    continue;
                }
                if (glob.equals("**")) {
                    for (int k = j; k <= path.size(); k++) {
                        next[k] = true;
                    }
                    break;
                }
                if (j < path.size() && segmentMatches(glob, path.get(j))) {
                    next[j + 1] = true;
                }
            }
            reachable = next;
        }
        return reachable[path.size()];
    }

    /** {@code *} and {@code ?} within one segment; greedy with one backtrack point, linear in practice. */
    private static boolean segmentMatches(String glob, String name) {
        int g = 0;
        int n = 0;
        int star = -1;
        int resume = 0;
        while (n < name.length()) {
            if (g < glob.length() && (glob.charAt(g) == '?' || glob.charAt(g) == name.charAt(n))) {
                g++;
                n++;
            } else if (g < glob.length() && glob.charAt(g) == '*') {
                star = g++;
                resume = n;
            } else if (star >= 0) {
                g = star + 1;
                n = ++resume;
            } else {
                return false;
            }
        }
        while (g < glob.length() && glob.charAt(g) == '*') {
            g++;
        }
        return g == glob.length();
    }

    private static Optional<String> problem(String pattern) {
        if (pattern.isEmpty()) {
            return Optional.of("empty pattern");
        }
        if (Quoting.hasControl(pattern)) {
            return Optional.of("NUL and other control characters are not allowed");
        }
        if (pattern.startsWith("/")) {
            return Optional.of("must be relative to the project directory (no leading '/')");
        }
        if (pattern.startsWith("!")) {
            return Optional.of("negation ('!') is not supported");
        }
        for (char c : new char[] {'[', ']', '{', '}', '\\'}) {
            if (pattern.indexOf(c) >= 0) {
                return Optional.of("character classes, braces and escapes are not supported");
            }
        }
        for (String segment : pattern.split("/", -1)) {
            if (segment.isEmpty()) {
                return Optional.of("empty path segment");
            }
            if (segment.equals("..")) {
                return Optional.of("'..' is not allowed");
            }
            if (segment.equals(".")) {
                return Optional.of("'.' segments are not allowed; write the path without './'");
            }
            if (segment.contains("**") && !segment.equals("**")) {
                return Optional.of("'**' must be a whole path segment");
            }
        }
        return Optional.empty();
    }
}
