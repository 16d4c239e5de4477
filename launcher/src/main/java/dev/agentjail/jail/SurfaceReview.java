package dev.agentjail.jail;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks, after a session, the surfaces of the project and of the agents' writable home directories that the host
 * later runs or lets run (nested git repositories, directories laid out as one, .envrc, editor, agent, hook, package
 * and version manager settings, driver-naming .gitattributes, entries of .git that git does not create, a rebase todo
 * with exec lines, agent settings and code in the home), and moves each that is new or changed since the snapshot
 * before the session into the {@link Quarantine}. See docs/review.md.
 */
public final class SurfaceReview {
    /**
     * The agents' home directories (below the home) whose top-level settings and code are checked when the jail can
     * write to them.
     */
    public static final List<Path> AGENT_HOME_DIRS =
            SurfaceRules.AGENT_DIRS.stream().map(SurfaceRules.AgentDir::dir).toList();

    private static final Path SELF = Path.of("");
    private static final int CONTENT_CHECK_BYTES = 1 << 20;
    private static final Pattern DRIVER = Pattern.compile("(?m)(^|\\s)(filter|diff|merge)=\\S");
    private static final Pattern EXEC = Pattern.compile("(?m)^\\s*(exec|x)(\\s|$)");
    /**
     * A HEAD git accepts (setup.c, validate_headref): a symbolic ref into refs/, or an object id, in its first 255
     * bytes. Git's whitespace after "ref:" is a subset of Java's \s: matching more fails closed.
     */
    private static final Pattern HEAD_REF = Pattern.compile("ref:\\s*refs/|\\p{XDigit}{40}");

    private static final int HEAD_BYTES = 255;
    private static final String HEAD = "HEAD";
    private static final String CONFIG = "config";

    private final Limits limits;
    private final Limits sweepLimits;
    private final Clock clock;

    public SurfaceReview(Limits limits, Clock clock) {
        this(limits, Limits.SWEEP, clock);
    }

    /** With the bounds of the sweep that follows a review that reached {@code limits}. */
    public SurfaceReview(Limits limits, Limits sweepLimits, Clock clock) {
        this.limits = limits;
        this.sweepLimits = sweepLimits;
        this.clock = clock;
    }

    /**
     * The bounds of one snapshot or review: per tree, its depth, its entries and the bytes hashed; per call, the time.
     * Reaching one is reported as a {@link Change#INCOMPLETE} finding, never passed over.
     */
    public record Limits(int maxDepth, int maxEntries, long maxBytes, Duration maxTime) {
        public static final Limits DEFAULTS = new Limits(64, 200_000, 256L << 20, Duration.ofSeconds(10));

        /**
         * The sweep that follows a review that reached its bounds: judged by change time, it needs no snapshot, so it
         * can go as far as the tree does, within these.
         */
        public static final Limits SWEEP = new Limits(256, 5_000_000, 1L << 30, Duration.ofSeconds(120));

        /** {@code agentjail review --finish}: the user waits for it on purpose. */
        public static final Limits FINISH = new Limits(1024, 200_000_000, 16L << 30, Duration.ofHours(2));

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
     * @param reason why the surface matters: its kind's reason, or one of the tool that reads it
     * @param quarantinedTo where the surface now lies; empty for an incomplete review, or when it could not be moved
     *     (then {@code detail} says why)
     */
    public record Finding(
            Root root,
            Path path,
            SurfaceKind kind,
            String reason,
            Change change,
            Optional<Path> quarantinedTo,
            String detail) {
        /** One line for the user. */
        public String describe() {
            Path where = root.dir().resolve(path);
            if (change == Change.INCOMPLETE) {
                return "review incomplete: " + detail;
            }
            return (change == Change.NEW ? "new " : "changed ") + kind.code() + " " + where + " (" + reason + "): "
                    + quarantinedTo
                            .map(q -> "quarantined to " + q + "; " + detail)
                            .orElse("NOT quarantined: " + detail);
        }
    }

    /** What the trees held before the session, as {@link #afterSession} compares it. */
    public static final class Snapshot {
        private final Path project;
        private final List<Scan> scans;
        private final Instant taken;

        private Snapshot(Path project, List<Scan> scans, Instant taken) {
            this.project = project;
            this.scans = List.copyOf(scans);
            this.taken = taken;
        }

        /** When the snapshot began: what changed after it is the session's. */
        public Instant taken() {
            return taken;
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
        Instant taken = kernelNow();
        long deadline = clock.millis() + limits.maxTime().toMillis();
        List<Scan> scans = new ArrayList<>();
        for (Root root : roots) {
            scans.add(scan(root, deadline, "before the session"));
        }
        return new Snapshot(project, scans, taken);
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
                findings.addAll(problems(root, s));
            }
            if (now.existed) {
                judge(before.project, was, now, quarantine, session, findings);
            }
        }
        if (findings.stream().noneMatch(f -> f.change() == Change.INCOMPLETE)) {
            return List.copyOf(findings);
        }
        // Past a bound the snapshot cannot tell the agent's surfaces from the user's; their change times can.
        List<Finding> swept = new SurfaceReview(sweepLimits, sweepLimits, clock)
                .sweep(before.project, before.roots(), before.taken(), quarantineDir, session);
        List<Finding> result = new ArrayList<>();
        findings.stream().filter(f -> f.change() != Change.INCOMPLETE).forEach(result::add);
        result.addAll(swept);
        return List.copyOf(result);
    }

    /** The bounds a scan reached and the entries it could not read, as incomplete findings. */
    private static List<Finding> problems(Root root, Scan scan) {
        List<Finding> found = new ArrayList<>();
        for (int i = 0; i < scan.problems.size(); i++) {
            found.add(incomplete(root, scan.problemPaths.get(i), scan.problems.get(i)));
        }
        return found;
    }

    private static Finding incomplete(Root root, Path path, String detail) {
        return new Finding(
                root,
                path,
                SurfaceKind.REVIEW_INCOMPLETE,
                SurfaceKind.REVIEW_INCOMPLETE.reason(),
                Change.INCOMPLETE,
                Optional.empty(),
                detail);
    }

    /**
     * Judges by change time instead of by a snapshot: walks {@code roots} and moves into the quarantine every surface
     * whose entry, or an entry below it, changed (ctime, which no process can set back) after {@code since} (a
     * snapshot's {@link Snapshot#taken}). What was there before and was not touched stays. When a bound is reached
     * the session's review stays pending ({@link Quarantine#markPending}): the first finding says to run {@code
     * agentjail review --finish}; a complete sweep clears it.
     */
    public List<Finding> sweep(Path project, List<Root> roots, Instant since, Path quarantineDir, String session) {
        long deadline = clock.millis() + limits.maxTime().toMillis();
        Quarantine quarantine = new Quarantine(quarantineDir, clock);
        FileTime from = FileTime.from(since);
        List<Finding> findings = new ArrayList<>();
        List<Finding> incomplete = new ArrayList<>();
        for (Root root : roots) {
            Scan now = scan(root, deadline, "in the sweep by change time");
            incomplete.addAll(problems(root, now));
            if (now.existed) {
                judge(project, now.untouchedSince(from, deadline, clock), now, quarantine, session, findings);
            }
        }
        try {
            if (incomplete.isEmpty()) {
                quarantine.clearPending(session);
            } else {
                quarantine.markPending(new Quarantine.Pending(
                        session, project, roots, since, incomplete.get(0).detail()));
                findings.add(incomplete(
                        roots.get(0),
                        SELF,
                        "what lies past the bound was not checked: before you run git, direnv or an editor in "
                                + project + ", run `agentjail review --finish` (sessions on this project refuse to"
                                + " start until then)"));
            }
        } catch (IOException e) {
            findings.add(incomplete(roots.get(0), SELF, "cannot record the unfinished review: " + IoErrors.message(e)));
        }
        findings.addAll(incomplete);
        return List.copyOf(findings);
    }

    private void judge(
            Path project, Scan was, Scan now, Quarantine quarantine, String session, List<Finding> findings) {
        ProjectFiles files = ProjectFiles.of(now.root.dir());
        Map<Path, Change> layouts = layoutChanges(was, now);
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
                change = null;
            } else {
                change = Change.CHANGED;
            }
            String note = "";
            if (surface.kind() == SurfaceKind.BARE_REPOSITORY) {
                Path layout = now.layoutOf(path);
                if (isHeadOrConfig(path, layout)) {
                    // HEAD and config go together when either is new or changed: without HEAD git takes the
                    // directory for no repository, without config it runs nothing the agent named.
                    Change layoutChange = layouts.get(layout);
                    if (layoutChange == null) {
                        continue;
                    }
                    Path dir = now.root.dir().resolve(layout);
                    note = change == null
                            ? "unchanged, moved with the rest of the repository layout of " + dir + ", so that git"
                                    + " no longer takes it for a repository; "
                            : "git no longer takes " + dir + " for a repository; ";
                    change = change == null ? layoutChange : change;
                } else if (!was.walkedLayouts.contains(layout)) {
                    // The layout is new since the snapshot (moving its HEAD ends it), or the snapshot did not get
                    // through it: what else lies there may be the user's.
                    continue;
                }
            }
            if (change == null || !runsSomething(files, path, surface)) {
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
                        surface.rule().reason(),
                        change,
                        Optional.of(quarantine.directory().resolve(session).resolve(item.item())),
                        note + "agentjail review --restore " + item.id() + " puts it back"));
            } catch (IOException | RuntimeException ex) {
                findings.add(new Finding(
                        now.root,
                        path,
                        surface.kind(),
                        surface.rule().reason(),
                        change,
                        Optional.empty(),
                        String.valueOf(ex.getMessage())));
            }
        }
    }

    /**
     * The directories laid out as a repository after the session whose HEAD or config is new or changed, each with
     * how: new when the directory was no such layout at the snapshot (and the snapshot saw it), else changed.
     */
    private static Map<Path, Change> layoutChanges(Scan was, Scan now) {
        Map<Path, Change> changes = new HashMap<>();
        for (Path layout : now.layouts) {
            boolean changed = false;
            for (String name : List.of(HEAD, CONFIG)) {
                Path path = layout.resolve(name);
                Surface surface = now.surfaces.get(path);
                Surface before = was.surfaces.get(path);
                if (surface == null || surface.digest() == null || (before != null && before.digest() == null)) {
                    continue;
                }
                changed |= before == null ? was.covers(path) : !before.digest().equals(surface.digest());
            }
            if (changed) {
                changes.put(layout, was.layouts.contains(layout) ? Change.CHANGED : Change.NEW);
            }
        }
        return changes;
    }

    private static boolean isHeadOrConfig(Path path, Path layout) {
        Path parent = path.getParent();
        String name = path.getFileName().toString();
        return (parent == null ? SELF : parent).equals(layout) && (name.equals(HEAD) || name.equals(CONFIG));
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
            failed.stop(SELF, when + ": cannot open " + root.dir() + ": " + IoErrors.message(e));
            return failed;
        }
        Scan scan = new Scan(root, attributes.isPresent());
        if (attributes.isEmpty()) {
            return scan;
        }
        SurfaceRules.Context rootContext = root.kind().equals("project")
                ? SurfaceRules.PROJECT
                : SurfaceRules.home(Path.of(root.kind().substring(root.kind().indexOf('/') + 1)));
        Collector collector = new Collector(files, scan, rootContext, deadline, when);
        // The root's own entries first, its directories remembered rather than entered; then the surfaces and git
        // directories among them, then the rest: a bound reached deep in the project leaves the top level checked.
        collector.topLevelOnly = true;
        boolean exhausted = collector.walk(SELF, 1) == Outcome.EXHAUSTED;
        collector.topLevelOnly = false;
        if (!exhausted) {
            List<Path> deferred = new ArrayList<>(collector.deferred);
            deferred.sort((a, b) -> Boolean.compare(!scan.surfaces.containsKey(a), !scan.surfaces.containsKey(b)));
            for (Path dir : deferred) {
                if (collector.walk(dir, limits.maxDepth() - 1) == Outcome.EXHAUSTED) {
                    exhausted = true;
                    break;
                }
            }
        }
        collector.layouts(exhausted);
        return scan;
    }

    /**
     * The kernel's idea of now, as it stamps files: the change time of a file made for the purpose. The injected
     * clock is not it (ctime comes from the kernel's coarse clock), and a sweep compares change times with it.
     */
    static Instant kernelNow() {
        try {
            Path probe = Files.createTempFile("agentjail-review-", ".time");
            try {
                return ctime(probe).toInstant();
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException e) {
            // No temporary file: the system clock, a tick early, so that nothing changed after it passes for older.
            return Instant.now().minusMillis(20);
        }
    }

    /** Whether {@code path} below {@code root}, or anything below it, changed after {@code since}. */
    private static boolean changedSince(Path root, Path path, FileTime since, long deadline, Clock clock) {
        try {
            if (ctime(root.resolve(path)).compareTo(since) > 0) {
                return true;
            }
            ProjectFiles files = ProjectFiles.of(root);
            if (!files.attributes(path).map(PosixFileAttributes::isDirectory).orElse(false)) {
                return false;
            }
            // Any entry changed, past the time bound, or unreadable: each answers "changed" (failing closed).
            files.walk(path, 256, 5_000_000, (relative, attributes) -> {
                if (clock.millis() > deadline || ctime(root.resolve(relative)).compareTo(since) > 0) {
                    throw new IOException("changed");
                }
                return ProjectFiles.Visit.CONTINUE;
            });
            return false;
        } catch (IOException | RuntimeException changedOrUnknown) {
            return true;
        }
    }

    static FileTime ctime(Path path) throws IOException {
        return (FileTime) Files.getAttribute(path, "unix:ctime", LinkOption.NOFOLLOW_LINKS);
    }

    private static Path real(Path dir) {
        try {
            return dir.toRealPath();
        } catch (IOException missing) {
            return dir.toAbsolutePath().normalize();
        }
    }

    /** How far a walk got. */
    private enum Outcome {
        COMPLETE,
        /** It stopped (at the depth bound, or at an entry it could not read); other walks may go on. */
        PARTIAL,
        /** A bound of the whole tree was reached: no further walk. */
        EXHAUSTED
    }

    /** One tree's surfaces, and how far the walk got. */
    private static final class Scan {
        final Root root;
        final boolean existed;
        final Map<Path, Surface> surfaces = new TreeMap<>();
        final Set<Path> seenDirs = new HashSet<>();
        final Set<Path> listed = new HashSet<>();
        /** Listed directories whose entries were not all walked: the walk stopped below them. */
        final Set<Path> cutShort = new HashSet<>();
        /** Directories that git takes for a repository by their layout. */
        final Set<Path> layouts = new TreeSet<>();
        /** The layouts whose git entries (hooks, info, commondir, ...) were walked completely. */
        final Set<Path> walkedLayouts = new HashSet<>();

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
         * scan saw was listed, and its entries all walked.
         */
        boolean covers(Path path) {
            if (!existed || !stopped) {
                return true;
            }
            Path dir = path.getParent();
            while (dir != null && !seenDirs.contains(dir)) {
                dir = dir.getParent();
            }
            Path seen = dir == null ? SELF : dir;
            return listed.contains(seen) && !cutShort.contains(seen);
        }

        /**
         * This scan as a snapshot taken at {@code since} would have seen it: the surfaces whose entries (and entries
         * below them) all changed before it. One that cannot be checked counts as changed.
         */
        Scan untouchedSince(FileTime since, long deadline, Clock clock) {
            Scan was = new Scan(root, true);
            was.layouts.addAll(layouts);
            was.walkedLayouts.addAll(walkedLayouts);
            for (Map.Entry<Path, Surface> e : surfaces.entrySet()) {
                if (!changedSince(root.dir(), e.getKey(), since, deadline, clock)) {
                    was.surfaces.put(e.getKey(), e.getValue());
                }
            }
            return was;
        }

        /** The innermost layout {@code path} lies in (SELF when it is the root's, or none). */
        Path layoutOf(Path path) {
            Path dir = path.getParent();
            while (dir != null && !layouts.contains(dir)) {
                dir = dir.getParent();
            }
            return dir == null ? SELF : dir;
        }
    }

    /** A surface entry: the rule it was found by, its type and digest (null when it could not be read). */
    private record Surface(SurfaceRules.Rule rule, ProjectFiles.Type type, String digest) {
        SurfaceKind kind() {
            return rule.kind();
        }
    }

    /** Records the surfaces of one tree as {@link ProjectFiles#walk} shows its entries. */
    private final class Collector implements ProjectFiles.Visitor {
        private static final int HAS_HEAD = 1;
        private static final int HAS_OBJECTS = 2;
        private static final int HAS_REFS = 4;
        private static final int HAS_COMMONDIR = 8;

        final ProjectFiles files;
        final Scan scan;
        final long deadline;
        final String when;
        final Map<Path, SurfaceRules.Context> contexts = new HashMap<>();
        final List<Path> deferred = new ArrayList<>();
        /** Per project directory, which of git's repository signatures (HEAD, objects, refs, commondir) it holds. */
        final Map<Path, Integer> gitSignatures = new TreeMap<>();
        /** The directories listed by the current walk. */
        final List<Path> listedByWalk = new ArrayList<>();

        boolean topLevelOnly;
        /** Walking a layout's git entries: what the project's rules found there stays as they found it. */
        boolean layoutPass;

        int entries;
        long bytes;

        Collector(ProjectFiles files, Scan scan, SurfaceRules.Context rootContext, long deadline, String when) {
            this.files = files;
            this.scan = scan;
            this.deadline = deadline;
            this.when = when;
            contexts.put(SELF, rootContext);
        }

        /** Walks below {@code start}. */
        Outcome walk(Path start, int maxDepth) {
            int remaining = limits.maxEntries() - entries;
            listedByWalk.clear();
            try {
                if (remaining < 1) {
                    throw new WalkLimitException(
                            WalkLimitException.Bound.ENTRIES,
                            limits.maxEntries(),
                            files.root().resolve(start));
                }
                files.walk(start, maxDepth, remaining, this);
                return Outcome.COMPLETE;
            } catch (WalkLimitException e) {
                // This walk had what was left of the tree's bounds: name the tree's.
                WalkLimitException named = switch (e.bound()) {
                    case ENTRIES ->
                        new WalkLimitException(WalkLimitException.Bound.ENTRIES, limits.maxEntries(), e.where());
                    case DEPTH -> new WalkLimitException(WalkLimitException.Bound.DEPTH, limits.maxDepth(), e.where());
                    default -> e;
                };
                Path where = relative(named.where());
                // The walk is depth first: it stopped inside each directory from where it was up to where it began.
                for (Path dir = where; dir != null && below(dir, start); dir = dir.getParent()) {
                    scan.cutShort.add(dir);
                }
                scan.cutShort.add(start);
                scan.stop(
                        where,
                        when + ": " + named.getMessage() + "; surfaces beyond it in " + scan.root.dir()
                                + " were not checked");
                return e.bound() == WalkLimitException.Bound.DEPTH ? Outcome.PARTIAL : Outcome.EXHAUSTED;
            } catch (IOException | RuntimeException e) {
                // Where it failed is not known: none of what it listed counts as walked.
                scan.cutShort.addAll(listedByWalk);
                scan.cutShort.add(start);
                scan.stop(
                        start,
                        when + ": cannot walk " + files.root().resolve(start) + ": " + IoErrors.message(e)
                                + "; surfaces below it were not checked");
                return Outcome.PARTIAL;
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
            Path parent = relative.getParent() == null ? SELF : relative.getParent();
            SurfaceRules.Context context = contexts.get(parent);
            if (context == null) {
                return ProjectFiles.Visit.SKIP_SUBTREE;
            }
            if (context.mode() == SurfaceRules.Mode.PROJECT
                    || (context.mode() == SurfaceRules.Mode.HOME && parent.equals(SELF))) {
                noteGitSignature(parent, relative.getFileName().toString(), attributes);
            }
            SurfaceRules.Decision decision = SurfaceRules.classify(context, relative, attributes, this::isGitDir);
            if (attributes.isDirectory()) {
                scan.seenDirs.add(relative);
            }
            if (decision.rule() != null && !(layoutPass && scan.surfaces.containsKey(relative))) {
                record(relative, decision.rule(), attributes);
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
            listedByWalk.add(directory);
        }

        private void record(Path relative, SurfaceRules.Rule rule, PosixFileAttributes attributes)
                throws WalkLimitException {
            ProjectFiles.Type type = ProjectFiles.Type.of(attributes);
            scan.surfaces.put(relative, new Surface(rule, type, digest(relative, type, attributes)));
        }

        /**
         * Notes the entries of a directory by which git takes it for a repository (setup.c, is_git_directory): a
         * HEAD, and an objects and a refs git can enter (access X_OK: a directory, or a link or a file git might; a
         * plain file without an execute bit is not), or a commondir naming where they are.
         */
        private void noteGitSignature(Path dir, String name, PosixFileAttributes attributes) {
            int signature = switch (name) {
                case HEAD -> attributes.isDirectory() ? 0 : HAS_HEAD;
                case "objects" -> enterable(attributes) ? HAS_OBJECTS : 0;
                case "refs" -> enterable(attributes) ? HAS_REFS : 0;
                case "commondir" -> HAS_COMMONDIR;
                default -> 0;
            };
            if (signature != 0) {
                gitSignatures.merge(dir, signature, (a, b) -> a | b);
            }
        }

        private static boolean enterable(PosixFileAttributes attributes) {
            if (!attributes.isRegularFile()) {
                return true;
            }
            Set<PosixFilePermission> p = attributes.permissions();
            return p.contains(PosixFilePermission.OWNER_EXECUTE)
                    || p.contains(PosixFilePermission.GROUP_EXECUTE)
                    || p.contains(PosixFilePermission.OTHERS_EXECUTE);
        }

        /**
         * After the walks: records the HEAD and config of each directory git takes for a repository by its layout, and
         * walks the git entries of each (unless a bound of the tree was reached), so that a change there is seen.
         */
        void layouts(boolean exhausted) {
            for (Map.Entry<Path, Integer> e : gitSignatures.entrySet()) {
                int s = e.getValue();
                boolean store = (s & (HAS_OBJECTS | HAS_REFS)) == (HAS_OBJECTS | HAS_REFS) || (s & HAS_COMMONDIR) != 0;
                if ((s & HAS_HEAD) != 0 && store && validHead(e.getKey().resolve(HEAD))) {
                    scan.layouts.add(e.getKey());
                }
            }
            SurfaceRules.Rule rule = SurfaceRules.GIT_LAYOUT.rule();
            for (Path layout : scan.layouts) {
                try {
                    for (String name : List.of(HEAD, CONFIG)) {
                        Path path = layout.resolve(name);
                        Optional<PosixFileAttributes> attributes = files.attributes(path);
                        if (attributes.isPresent()) {
                            record(path, rule, attributes.get());
                        }
                    }
                } catch (WalkLimitException e) {
                    scan.stop(
                            relative(e.where()),
                            when + ": " + e.getMessage() + "; surfaces beyond it in " + scan.root.dir()
                                    + " were not checked");
                    exhausted = true;
                } catch (IOException e) {
                    scan.problem(
                            layout,
                            when + ": cannot read " + files.root().resolve(layout) + ": " + IoErrors.message(e));
                }
            }
            if (exhausted) {
                return;
            }
            layoutPass = true;
            for (Path layout : scan.layouts) {
                SurfaceRules.Context saved = contexts.put(layout, SurfaceRules.GIT_LAYOUT);
                // Its entries lie one level below it; the depth bound counts from the root.
                int depth = layout.equals(SELF) ? 0 : layout.getNameCount();
                Outcome outcome = walk(layout, limits.maxDepth() - depth);
                contexts.put(layout, saved);
                if (outcome == Outcome.COMPLETE) {
                    scan.walkedLayouts.add(layout);
                } else if (outcome == Outcome.EXHAUSTED) {
                    break;
                }
            }
            layoutPass = false;
        }

        /**
         * Whether git accepts {@code head} as a repository's HEAD (setup.c, validate_headref). Failing closed: a link,
         * an entry that is neither a file nor a directory, and a file that cannot be read count as valid.
         */
        private boolean validHead(Path head) {
            try {
                Optional<PosixFileAttributes> attributes = files.attributes(head);
                if (attributes.isEmpty() || attributes.get().isDirectory()) {
                    return false;
                }
                if (!attributes.get().isRegularFile()) {
                    return true;
                }
                ByteBuffer buffer = ByteBuffer.allocate(HEAD_BYTES);
                try (SeekableByteChannel in = files.openFile(head)) {
                    int n = 0;
                    while (n >= 0 && buffer.hasRemaining()) {
                        n = in.read(buffer);
                    }
                }
                String start = new String(buffer.array(), 0, buffer.position(), StandardCharsets.ISO_8859_1);
                return HEAD_REF.matcher(start).lookingAt();
            } catch (IOException e) {
                return true;
            }
        }

        private boolean isGitDir(Path dir) {
            try {
                return files.attributes(dir.resolve(HEAD)).isPresent();
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
                        relative,
                        when + ": cannot read " + files.root().resolve(relative) + ": " + IoErrors.message(e));
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

    /** Whether {@code path} is {@code dir} or lies below it ({@code dir} empty: the root, which holds everything). */
    private static boolean below(Path path, Path dir) {
        return dir.equals(SELF) || path.startsWith(dir);
    }
}
