package dev.agentjail.jail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Checks, after a session, the surfaces of the project and of the agents' writable home directories that the host
 * later runs or lets run (nested git repositories, .envrc, editor, agent and hook settings, driver-naming
 * .gitattributes, entries of .git that git does not create, a rebase todo with exec lines, agent settings and code in
 * the home), and moves each that is new or changed since the snapshot before the session into the {@link Quarantine}.
 * See docs/review.md.
 */
public final class SurfaceReview {
    /**
     * The agents' home directories (below the home) whose top-level settings and code are checked when the jail can
     * write to them.
     */
    public static final List<Path> AGENT_HOME_DIRS = List.of(
            Path.of(".claude"),
            Path.of(".codex"),
            Path.of(".gemini"),
            Path.of(".pi/agent"),
            Path.of(".config/opencode"),
            Path.of(".config/crush"),
            Path.of(".config/goose"));

    private static final Path SELF = Path.of("");
    private static final int CONTENT_CHECK_BYTES = 1 << 20;
    private static final Pattern DRIVER = Pattern.compile("(?m)(^|\\s)(filter|diff|merge)=\\S");
    private static final Pattern EXEC = Pattern.compile("(?m)^\\s*(exec|x)(\\s|$)");

    private final Limits limits;
    private final Clock clock;

    public SurfaceReview(Limits limits, Clock clock) {
        this.limits = limits;
        this.clock = clock;
    }

    /**
     * The bounds of one snapshot or review: per tree, its depth, its entries and the bytes hashed; per call, the time.
     * Reaching one is reported as a {@link Change#INCOMPLETE} finding, never passed over.
     */
    public record Limits(int maxDepth, int maxEntries, long maxBytes, Duration maxTime) {
        public static final Limits DEFAULTS = new Limits(64, 200_000, 256L << 20, Duration.ofSeconds(10));

        public Limits {
            if (maxDepth < 2 || maxEntries < 1 || maxBytes < 0 || maxTime.isNegative() || maxTime.isZero()) {
                throw new IllegalArgumentException("review limits must be positive (depth at least 2): depth "
                        + maxDepth + ", entries " + maxEntries + ", bytes " + maxBytes + ", time " + maxTime);
            }
        }
    }

    /**
     * A tree the review covers.
     *
     * @param kind "project", or "home/" and the directory below the home ({@code home/.claude}); the quarantine keeps
     *     its items below this name
     * @param dir the tree's directory (its real path when it existed at the snapshot)
     */
    public record Root(String kind, Path dir) {}

    /** Whether a surface is new since the snapshot, changed, or could not be checked. */
    public enum Change {
        NEW,
        CHANGED,
        INCOMPLETE
    }

    /**
     * What the review found.
     *
     * @param path the surface, relative to the root; for an incomplete review, where it stopped (empty: the root)
     * @param quarantinedTo where the surface now lies; empty for an incomplete review, or when it could not be moved
     *     (then {@code detail} says why)
     */
    public record Finding(
            Root root, Path path, SurfaceKind kind, Change change, Optional<Path> quarantinedTo, String detail) {
        /** One line for the user. */
        public String describe() {
            Path where = root.dir().resolve(path);
            if (change == Change.INCOMPLETE) {
                return "review incomplete: " + detail;
            }
            return (change == Change.NEW ? "new " : "changed ") + kind.code() + " " + where + " (" + kind.reason()
                    + "): "
                    + quarantinedTo
                            .map(q -> "quarantined to " + q + "; " + detail)
                            .orElse("NOT quarantined: " + detail);
        }
    }

    /** What the trees held before the session, as {@link #afterSession} compares it. */
    public static final class Snapshot {
        private final Path project;
        private final List<Scan> scans;

        private Snapshot(Path project, List<Scan> scans) {
            this.project = project;
            this.scans = List.copyOf(scans);
        }

        /** The trees snapshotted. */
        public List<Root> roots() {
            return scans.stream().map(s -> s.root).toList();
        }

        /** Where the snapshot reached a bound or could not read an entry: the review after the session will say so. */
        public List<String> incomplete() {
            return scans.stream().flatMap(s -> s.problems.stream()).toList();
        }
    }

    /**
     * The trees to review: the project, and each of {@link #AGENT_HOME_DIRS} below {@code home} that lies in or holds
     * one of {@code writable} (the host paths the jail can write to, such as {@code
     * BwrapCommand.writableBindSources}).
     */
    public static List<Root> roots(Path project, Path home, List<Path> writable) {
        List<Root> roots = new ArrayList<>();
        roots.add(new Root("project", project));
        for (Path agentDir : AGENT_HOME_DIRS) {
            Path dir = home.resolve(agentDir);
            Path real = real(dir);
            boolean reachable = writable.stream()
                    .anyMatch(w -> real.startsWith(w) || w.startsWith(real) || dir.startsWith(w) || w.startsWith(dir));
            if (reachable && !real.startsWith(project)) {
                roots.add(new Root("home/" + agentDir, real));
            }
        }
        return List.copyOf(roots);
    }

    /** Snapshots the surfaces of {@link #roots} before the jail starts. */
    public Snapshot snapshot(Path project, Path home, List<Path> writable) {
        return snapshot(project, roots(project, home, writable));
    }

    /** Snapshots the surfaces of {@code roots}; a root of kind "project" is judged by the project's rules. */
    public Snapshot snapshot(Path project, List<Root> roots) {
        long deadline = clock.millis() + limits.maxTime().toMillis();
        List<Scan> scans = new ArrayList<>();
        for (Root root : roots) {
            scans.add(scan(root, deadline, "before the session"));
        }
        return new Snapshot(project, scans);
    }

    /**
     * After the jail has exited: walks the trees again and moves each surface that is new or changed since {@code
     * before} into {@code quarantineDir/<session>/<root kind>/<path>} (see {@link Quarantine}), never following a
     * link. A new directory moves whole; a changed file moves too, the user's version being gone already. Returns
     * what it found, bounds reached included.
     */
    public List<Finding> afterSession(Snapshot before, Path quarantineDir, String session) {
        long deadline = clock.millis() + limits.maxTime().toMillis();
        Quarantine quarantine = new Quarantine(quarantineDir, clock);
        List<Finding> findings = new ArrayList<>();
        for (Scan was : before.scans) {
            Root root = was.existed ? was.root : new Root(was.root.kind(), real(was.root.dir()));
            Scan now = scan(root, deadline, "after the session");
            for (Scan s : List.of(was, now)) {
                for (int i = 0; i < s.problems.size(); i++) {
                    findings.add(new Finding(
                            root,
                            s.problemPaths.get(i),
                            SurfaceKind.REVIEW_INCOMPLETE,
                            Change.INCOMPLETE,
                            Optional.empty(),
                            s.problems.get(i)));
                }
            }
            if (now.existed) {
                judge(before.project, was, now, quarantine, session, findings);
            }
        }
        return List.copyOf(findings);
    }

    private void judge(
            Path project, Scan was, Scan now, Quarantine quarantine, String session, List<Finding> findings) {
        ProjectFiles files = ProjectFiles.of(now.root.dir());
        List<Path> moved = new ArrayList<>();
        for (Map.Entry<Path, Surface> e : now.surfaces.entrySet()) {
            Path path = e.getKey();
            Surface surface = e.getValue();
            if (moved.stream().anyMatch(path::startsWith)) {
                continue;
            }
            Surface before = was.surfaces.get(path);
            if (surface.digest() == null || (before != null && before.digest() == null)) {
                continue; // Could not be read: reported as incomplete.
            }
            Change change;
            if (before == null) {
                if (!was.covers(path)) {
                    continue; // Beyond where the snapshot stopped: reported as incomplete.
                }
                change = Change.NEW;
            } else if (before.digest().equals(surface.digest())) {
                continue;
            } else {
                change = Change.CHANGED;
            }
            if (!runsSomething(files, path, surface)) {
                continue;
            }
            moved.add(path);
            try {
                Quarantine.Item item = quarantine.put(
                        session,
                        project,
                        now.root.kind(),
                        now.root.dir(),
                        path,
                        surface.kind(),
                        change,
                        limits.maxBytes());
                findings.add(new Finding(
                        now.root,
                        path,
                        surface.kind(),
                        change,
                        Optional.of(quarantine.directory().resolve(session).resolve(item.item())),
                        "agentjail review --restore " + item.id() + " puts it back"));
            } catch (IOException | RuntimeException ex) {
                findings.add(new Finding(
                        now.root, path, surface.kind(), change, Optional.empty(), String.valueOf(ex.getMessage())));
            }
        }
    }

    /**
     * Whether a new or changed surface matters: a .gitattributes only when it names a driver, a rebase todo only when
     * it holds exec lines; either when it is not a regular file or too large to check (failing closed).
     */
    private static boolean runsSomething(ProjectFiles files, Path path, Surface surface) {
        Pattern pattern = switch (surface.kind()) {
            case GITATTRIBUTES_DRIVER -> DRIVER;
            case REBASE_EXEC -> EXEC;
            default -> null;
        };
        if (pattern == null) {
            return true;
        }
        if (surface.type() != ProjectFiles.Type.FILE) {
            return surface.type() != ProjectFiles.Type.DIRECTORY;
        }
        try {
            return pattern.matcher(new String(files.read(path, CONTENT_CHECK_BYTES), StandardCharsets.UTF_8))
                    .find();
        } catch (IOException unreadable) {
            return true;
        }
    }

    private Scan scan(Root root, long deadline, String when) {
        Optional<PosixFileAttributes> attributes;
        ProjectFiles files;
        try {
            files = ProjectFiles.of(root.dir());
            attributes =
                    Files.exists(root.dir(), LinkOption.NOFOLLOW_LINKS) ? files.attributes(SELF) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            Scan failed = new Scan(root, true);
            failed.stop(SELF, when + ": cannot open " + root.dir() + ": " + e.getMessage());
            return failed;
        }
        Scan scan = new Scan(root, attributes.isPresent());
        if (attributes.isEmpty()) {
            return scan;
        }
        Collector collector = new Collector(
                files, scan, root.kind().equals("project") ? SurfaceRules.PROJECT : SurfaceRules.HOME, deadline, when);
        // The root's own entries first, its directories remembered rather than entered; then the surfaces and git
        // directories among them, then the rest: a bound reached deep in the project leaves the top level checked.
        collector.topLevelOnly = true;
        if (!collector.walk(SELF, 1)) {
            return scan;
        }
        collector.topLevelOnly = false;
        List<Path> deferred = new ArrayList<>(collector.deferred);
        deferred.sort((a, b) -> Boolean.compare(!scan.surfaces.containsKey(a), !scan.surfaces.containsKey(b)));
        for (Path dir : deferred) {
            if (!collector.walk(dir, limits.maxDepth() - 1)) {
                break;
            }
        }
        return scan;
    }

    private static Path real(Path dir) {
        try {
            return dir.toRealPath();
        } catch (IOException missing) {
            return dir.toAbsolutePath().normalize();
        }
    }

    /** One tree's surfaces, and how far the walk got. */
    private static final class Scan {
        final Root root;
        final boolean existed;
        final Map<Path, Surface> surfaces = new TreeMap<>();
        final Set<Path> seenDirs = new HashSet<>();
        final Set<Path> listed = new HashSet<>();
        final List<String> problems = new ArrayList<>();
        final List<Path> problemPaths = new ArrayList<>();
        boolean stopped;

        Scan(Root root, boolean existed) {
            this.root = root;
            this.existed = existed;
        }

        /** The walk did not get everywhere: {@link #covers} now consults what it listed. */
        void stop(Path where, String message) {
            stopped = true;
            problem(where, message);
        }

        void problem(Path where, String message) {
            problems.add(message);
            problemPaths.add(where);
        }

        /**
         * Whether this (earlier) scan would have seen an entry at {@code path}: the nearest directory above it that the
         * scan saw was listed completely.
         */
        boolean covers(Path path) {
            if (!existed || !stopped) {
                return true;
            }
            Path dir = path.getParent();
            while (dir != null && !seenDirs.contains(dir)) {
                dir = dir.getParent();
            }
            return listed.contains(dir == null ? SELF : dir);
        }
    }

    /** A surface entry: its kind, type and digest (null when it could not be read). */
    private record Surface(SurfaceKind kind, ProjectFiles.Type type, String digest) {}

    /** Records the surfaces of one tree as {@link ProjectFiles#walk} shows its entries. */
    private final class Collector implements ProjectFiles.Visitor {
        final ProjectFiles files;
        final Scan scan;
        final SurfaceRules.Context rootContext;
        final long deadline;
        final String when;
        final Map<Path, SurfaceRules.Context> contexts = new HashMap<>();
        final List<Path> deferred = new ArrayList<>();
        boolean topLevelOnly;
        int entries;
        long bytes;

        Collector(ProjectFiles files, Scan scan, SurfaceRules.Context rootContext, long deadline, String when) {
            this.files = files;
            this.scan = scan;
            this.rootContext = rootContext;
            this.deadline = deadline;
            this.when = when;
        }

        /** Walks below {@code start}; false when a bound other than the depth was reached (stop walking). */
        boolean walk(Path start, int maxDepth) {
            int remaining = limits.maxEntries() - entries;
            try {
                if (remaining < 1) {
                    throw new WalkLimitException(
                            WalkLimitException.Bound.ENTRIES,
                            limits.maxEntries(),
                            files.root().resolve(start));
                }
                files.walk(start, maxDepth, remaining, this);
                return true;
            } catch (WalkLimitException e) {
                // This walk had what was left of the tree's bounds: name the tree's.
                WalkLimitException named = switch (e.bound()) {
                    case ENTRIES ->
                        new WalkLimitException(WalkLimitException.Bound.ENTRIES, limits.maxEntries(), e.where());
                    case DEPTH -> new WalkLimitException(WalkLimitException.Bound.DEPTH, limits.maxDepth(), e.where());
                    default -> e;
                };
                scan.stop(
                        relative(named.where()),
                        when + ": " + named.getMessage() + "; surfaces beyond it in " + scan.root.dir()
                                + " were not checked");
                return e.bound() == WalkLimitException.Bound.DEPTH;
            } catch (IOException | RuntimeException e) {
                scan.stop(
                        start,
                        when + ": cannot walk " + files.root().resolve(start) + ": " + e.getMessage()
                                + "; surfaces below it were not checked");
                return true;
            }
        }

        @Override
        public ProjectFiles.Visit visit(Path relative, PosixFileAttributes attributes) throws IOException {
            entries++;
            if (clock.millis() > deadline) {
                throw new WalkLimitException(
                        WalkLimitException.Bound.TIME,
                        limits.maxTime().toMillis(),
                        files.root().resolve(relative));
            }
            Path parent = relative.getParent();
            SurfaceRules.Context context = parent == null ? rootContext : contexts.get(parent);
            if (context == null) {
                return ProjectFiles.Visit.SKIP_SUBTREE;
            }
            SurfaceRules.Decision decision = SurfaceRules.classify(context, relative, attributes, this::isGitDir);
            if (attributes.isDirectory()) {
                scan.seenDirs.add(relative);
            }
            if (decision.kind() != null) {
                ProjectFiles.Type type = ProjectFiles.Type.of(attributes);
                scan.surfaces.put(relative, new Surface(decision.kind(), type, digest(relative, type, attributes)));
            }
            if (!attributes.isDirectory() || decision.inner() == null) {
                return ProjectFiles.Visit.SKIP_SUBTREE;
            }
            contexts.put(relative, decision.inner());
            if (topLevelOnly) {
                deferred.add(relative);
                return ProjectFiles.Visit.SKIP_SUBTREE;
            }
            return ProjectFiles.Visit.CONTINUE;
        }

        @Override
        public void listed(Path directory) {
            scan.listed.add(directory);
        }

        private boolean isGitDir(Path dir) {
            try {
                return files.attributes(dir.resolve("HEAD")).isPresent();
            } catch (IOException e) {
                return false;
            }
        }

        /** The entry's digest: mode and SHA-256 for a file, the target for a link; null when it cannot be read. */
        private String digest(Path relative, ProjectFiles.Type type, PosixFileAttributes attributes)
                throws WalkLimitException {
            try {
                return switch (type) {
                    case FILE -> PosixFilePermissions.toString(attributes.permissions()) + " " + sha256(relative);
                    case SYMLINK -> "-> " + files.readLink(relative);
                    case DIRECTORY -> "directory";
                    case OTHER -> "other " + attributes.fileKey();
                };
            } catch (WalkLimitException e) {
                throw e;
            } catch (IOException e) {
                scan.problem(
                        relative, when + ": cannot read " + files.root().resolve(relative) + ": " + e.getMessage());
                return null;
            }
        }

        private String sha256(Path relative) throws IOException {
            MessageDigest sha = Quarantine.sha256();
            ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
            try (SeekableByteChannel in = files.openFile(relative)) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    bytes += n;
                    if (bytes > limits.maxBytes()) {
                        throw new WalkLimitException(
                                WalkLimitException.Bound.BYTES,
                                limits.maxBytes(),
                                files.root().resolve(relative));
                    }
                    buffer.flip();
                    sha.update(buffer);
                    buffer.clear();
                }
            }
            return HexFormat.of().formatHex(sha.digest());
        }

        private Path relative(Path absolute) {
            return absolute.startsWith(files.root()) ? files.root().relativize(absolute) : SELF;
        }
    }
}
