package dev.agentjail.jail;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Keeps each repository metadata directory in the project read-only as a whole while the jail can still do ordinary git
 * work: the jail sees, in its place, a session copy of its top level. git's data directories ({@link
 * GitLayout#WRITABLE_DIRS}) are bound writable from the host below the copy, config, hooks and everything else git does
 * not write read-only; the files git replaces by lock-and-rename ({@link GitLayout#mirrored}) live in the copy and are
 * mirrored to the host the moment they change (and back, when a host git changes them), and the directories of an
 * operation in progress ({@link GitLayout#STATE_DIRS}) are copied back after the session. Anything else the agent puts
 * in the copy ({@code commondir}, {@code config.worktree}, a new {@code info/}) never reaches the host's directory: it
 * goes into the session's quarantine, named like a review finding. So no name git reads to find config or code can
 * appear in the host's metadata directory, not even for a moment.
 */
public final class GitStages implements AutoCloseable {
    /** The copy's name inside the host's metadata directory, which the jail cannot see (the copy covers it). */
    static final String STAGE_PREFIX = "agentjail-stage.";

    /** How many top-level entries a metadata directory may have before the session refuses to start unchecked. */
    static final int MAX_TOP_ENTRIES = 10_000;

    /** The largest mirrored file (an index); a larger one is bound read-only instead of copied. */
    static final int MAX_FILE_BYTES = 128 << 20;

    private static final int MAX_STATE_DEPTH = 8;
    private static final int MAX_STATE_ENTRIES = 100_000;
    private static final long MAX_HASH_BYTES = 64L << 20;
    /** More entries than this left in one copy are quarantined as one item, the copy itself. */
    static final int MAX_ITEMS = 64;

    /** How many entries of git's data directories (loose objects not counted) are checked after a session. */
    static final int MAX_DATA_ENTRIES = 2_000_000;

    private static final java.util.regex.Pattern OBJECT_FANOUT = java.util.regex.Pattern.compile("[0-9a-f]{2}");

    /** Data directories made on the host when missing, so that what git writes there is the host's. */
    private static final List<String> PRE_MADE = List.of("worktrees");

    private static final java.util.regex.Pattern SHA256_FORMAT =
            java.util.regex.Pattern.compile("(?im)^\\s*objectformat\\s*=\\s*sha256\\s*$");

    /** A HEAD git reads (setup.c, validate_headref): a symbolic ref into refs/, or an object id. */
    private static final java.util.regex.Pattern HEAD_REF =
            java.util.regex.Pattern.compile("(ref:[ \\t]*refs/[^\\n]{1,240}|\\p{XDigit}{40}|\\p{XDigit}{64})\\n?");

    /** What {@link #prepare} returns: the protected paths to hand bwrap, and the stages to mirror and finish. */
    public record Plan(List<ProtectedPath> protectedPaths, GitStages stages) {}

    /** A file's content as last seen on both sides, by digest: empty when there was no such file. */
    private record Content(Optional<String> sha256) {
        static final Content ABSENT = new Content(Optional.empty());

        boolean same(Content other) {
            return sha256.equals(other.sha256);
        }

        boolean absent() {
            return sha256.isEmpty();
        }
    }

    /** The other side holds git's lock on the name (a git process is writing it): try again later. */
    private static final class Busy extends IOException {
        Busy(Path lock) {
            super(lock + " is locked");
        }
    }

    /**
     * One staged directory.
     *
     * @param relative the metadata directory below the project
     * @param real the host's directory
     * @param copy the session's copy the jail writes
     * @param mounts the names in the copy that are mount points (binds from the host, placeholders): not the agent's
     * @param copied the names of other entries copied in (a link git does not write): changed ones are quarantined
     * @param stateDirs the state directories copied in, with their digests
     * @param made the data directories the session made on the host so the jail could write them (removed if empty)
     * @param last each mirrored name's content as last synced
     */
    private record Stage(
            Path relative,
            Path real,
            Path copy,
            Set<String> mounts,
            Set<String> copied,
            Map<String, Optional<String>> stateDirs,
            Set<String> made,
            Map<String, Content> last) {}

    private final Path project;
    private final List<Stage> stages;
    private final int ownerUid;
    private final int ownerGid;
    private final Consumer<String> warnings;
    private final Set<String> conflicts = new HashSet<>();
    /** Held while a name is synced; the end's pass does not wait for a mirror stalled in an open (a fifo). */
    private final ReentrantLock lock = new ReentrantLock();

    /** When the copies were made, by the kernel's clock: an entry changed after it is the session's. */
    private final java.nio.file.attribute.FileTime started =
            java.nio.file.attribute.FileTime.from(SurfaceReview.kernelNow());

    private volatile boolean closed;
    private WatchService watcher;
    private Thread thread;

    private GitStages(Path project, List<Stage> stages, int ownerUid, int ownerGid, Consumer<String> warnings) {
        this.project = project;
        this.stages = stages;
        this.ownerUid = ownerUid;
        this.ownerGid = ownerGid;
        this.warnings = warnings;
    }

    /**
     * Stages every metadata directory in {@code paths} (those {@link ProtectedPaths#resolve} pinned that hold a HEAD
     * and lie in a {@code .git} or are named by {@code repositories}), copying into {@code STAGE_PREFIX + session} in
     * each, owned by {@code uid}/{@code gid} (the jail's user). Returns the protected paths with each such pin turned
     * into {@link ProtectedPath.State#STAGED} and the entries of its top level added as binds.
     */
    public static Plan prepare(
            Path project,
            List<ProtectedPath> paths,
            List<Repositories.Repository> repositories,
            String session,
            int uid,
            int gid,
            Consumer<String> warnings)
            throws IOException {
        Set<Path> gitDirs = new HashSet<>();
        for (Repositories.Repository repo : repositories) {
            Path dir = repo.gitDir().toAbsolutePath().normalize();
            if (dir.startsWith(project) && !dir.equals(project)) {
                gitDirs.add(project.relativize(dir));
            }
        }
        Map<Path, ProtectedPath> byPath = new HashMap<>();
        paths.forEach(p -> byPath.put(p.relative(), p));
        List<Stage> stages = new ArrayList<>();
        GitStages result = new GitStages(project, stages, uid, gid, warnings);
        try {
            for (ProtectedPath p : paths) {
                if (p.state() == ProtectedPath.State.PIN && isMetadataDir(project, p.relative(), gitDirs)) {
                    if (!Files.isWritable(project.resolve(p.relative()))) {
                        // What the launcher's user cannot write, the jail (the same user, or fewer rights) cannot
                        // either: the pin and the read-only binds already keep it as it is.
                        continue;
                    }
                    Stage stage = result.stage(p.relative(), byPath, session);
                    stages.add(stage);
                    byPath.put(
                            p.relative(),
                            new ProtectedPath(p.relative(), ProtectedPath.State.STAGED, Optional.of(stage.copy())));
                }
            }
        } catch (IOException | RuntimeException e) {
            result.removeCopies();
            throw e;
        }
        List<ProtectedPath> staged = new ArrayList<>(byPath.values());
        // Parents before children, as ProtectedPaths orders them; equal depths by name, so argv is stable.
        staged.sort(Comparator.comparingInt((ProtectedPath q) -> q.relative().getNameCount())
                .thenComparing(ProtectedPath::relative));
        return new Plan(List.copyOf(staged), result);
    }

    private static boolean isMetadataDir(Path project, Path relative, Set<Path> gitDirs) {
        boolean inGit = false;
        for (Path part : relative) {
            inGit |= part.toString().equals(".git");
        }
        if (!inGit && !gitDirs.contains(relative)) {
            return false;
        }
        Path dir = project.resolve(relative);
        return Files.isRegularFile(dir.resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)
                && (Files.isDirectory(dir.resolve("objects"), LinkOption.NOFOLLOW_LINKS)
                        || Files.isRegularFile(dir.resolve("commondir"), LinkOption.NOFOLLOW_LINKS));
    }

    private Stage stage(Path relative, Map<Path, ProtectedPath> byPath, String session) throws IOException {
        Path real = project.resolve(relative);
        Path copy = real.resolve(STAGE_PREFIX + session);
        Files.createDirectory(copy, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        own(copy, ownerUid, ownerGid);
        Set<String> mounts = new HashSet<>();
        Set<String> copied = new HashSet<>();
        Set<String> made = new HashSet<>();
        Map<String, Optional<String>> stateDirs = new HashMap<>();
        Map<String, Content> last = new HashMap<>();
        for (String name : PRE_MADE) {
            // git worktree add writes worktrees/ID: made here, it is the host's (and bound writable), not the copy's.
            if (!Files.exists(real.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(real.resolve(name));
                own(
                        real.resolve(name),
                        (Integer) Files.getAttribute(real, "unix:uid", LinkOption.NOFOLLOW_LINKS),
                        (Integer) Files.getAttribute(real, "unix:gid", LinkOption.NOFOLLOW_LINKS));
                made.add(name);
            }
        }
        for (Path p : byPath.keySet()) {
            if (relative.equals(p.getParent())) {
                mounts.add(p.getFileName().toString());
            }
        }
        List<Path> entries = new ArrayList<>();
        try (var list = Files.newDirectoryStream(real)) {
            for (Path entry : list) {
                if (entries.size() >= MAX_TOP_ENTRIES) {
                    throw new IOException("more than " + MAX_TOP_ENTRIES + " entries in " + real
                            + "; the jail does not start with repository metadata it did not check");
                }
                entries.add(entry);
            }
        }
        for (Path entry : entries) {
            String name = entry.getFileName().toString();
            Path inside = relative.resolve(name);
            if (mounts.contains(name) || name.startsWith(STAGE_PREFIX) || GitLayout.ephemeral(name)) {
                continue;
            }
            PosixFileAttributes a = Files.readAttributes(entry, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (a.isDirectory() && GitLayout.WRITABLE_DIRS.contains(name)) {
                byPath.put(inside, new ProtectedPath(inside, ProtectedPath.State.PIN));
                mounts.add(name);
            } else if (a.isRegularFile() && GitLayout.mirrored(name) && a.size() <= MAX_FILE_BYTES) {
                last.put(name, transfer(real, copy, name, new int[] {ownerUid, ownerGid}));
            } else if (a.isDirectory() && GitLayout.STATE_DIRS.contains(name) && copyTree(real, name, copy)) {
                stateDirs.put(name, Quarantine.digest(ProjectFiles.of(copy), Path.of(name), MAX_HASH_BYTES));
            } else if (a.isSymbolicLink()) {
                // A link git does not write: the copy gets the same link, and the host's stays as it is.
                Files.createSymbolicLink(copy.resolve(name), Files.readSymbolicLink(entry));
                own(copy.resolve(name), ownerUid, ownerGid);
                copied.add(name);
            } else if (a.isDirectory() || a.isRegularFile()) {
                byPath.putIfAbsent(inside, new ProtectedPath(inside, ProtectedPath.State.EXISTS));
                mounts.add(name);
            }
            // Anything else (a socket, a fifo) is not shown in the jail.
        }
        return new Stage(relative, real, copy, Set.copyOf(mounts), Set.copyOf(copied), stateDirs, made, last);
    }

    /**
     * Copies the state directory {@code name} of {@code real} into {@code copy}; false (and nothing copied) when it
     * holds anything but directories and regular files, or is too large: it is then bound read-only.
     */
    private boolean copyTree(Path real, String name, Path copy) throws IOException {
        ProjectFiles from = ProjectFiles.of(real);
        boolean[] plain = {true};
        try {
            from.walk(Path.of(name), MAX_STATE_DEPTH, MAX_STATE_ENTRIES, (relative, attributes) -> {
                plain[0] &= attributes.isDirectory() || attributes.isRegularFile();
                return ProjectFiles.Visit.CONTINUE;
            });
        } catch (WalkLimitException tooLarge) {
            return false;
        }
        if (!plain[0]) {
            return false;
        }
        Files.createDirectory(copy.resolve(name));
        own(copy.resolve(name), ownerUid, ownerGid);
        from.walk(Path.of(name), MAX_STATE_DEPTH, MAX_STATE_ENTRIES, (relative, attributes) -> {
            if (relative.equals(Path.of(name))) {
                return ProjectFiles.Visit.CONTINUE;
            }
            Path target = copy.resolve(relative);
            if (attributes.isDirectory()) {
                Files.createDirectory(target);
                own(target, ownerUid, ownerGid);
            } else {
                transfer(
                        real.resolve(relative).getParent(),
                        target.getParent(),
                        relative.getFileName().toString(),
                        new int[] {ownerUid, ownerGid});
            }
            return ProjectFiles.Visit.CONTINUE;
        });
        return true;
    }

    /** The metadata directories staged, below the project. */
    public List<Path> staged() {
        return stages.stream().map(Stage::relative).toList();
    }

    /** Starts mirroring the files git replaces, both ways, while the jail runs. */
    public void startMirror() throws IOException {
        if (stages.isEmpty()) {
            return;
        }
        watcher = FileSystems.getDefault().newWatchService();
        Map<WatchKey, Stage> keys = new HashMap<>();
        for (Stage stage : stages) {
            for (Path dir : List.of(stage.copy(), stage.real())) {
                keys.put(
                        dir.register(
                                watcher,
                                StandardWatchEventKinds.ENTRY_CREATE,
                                StandardWatchEventKinds.ENTRY_MODIFY,
                                StandardWatchEventKinds.ENTRY_DELETE),
                        stage);
            }
        }
        thread = Thread.ofPlatform().daemon().name("git-stage-mirror").start(() -> mirror(keys));
    }

    private void mirror(Map<WatchKey, Stage> keys) {
        try {
            while (!closed) {
                WatchKey key = watcher.take();
                Stage stage = keys.get(key);
                Set<String> names = new HashSet<>();
                for (WatchEvent<?> event : key.pollEvents()) {
                    if (event.context() instanceof Path name) {
                        String n = name.toString();
                        // A lock git (or this mirror) released: the name it guarded may be due now.
                        String guarded = n.endsWith(".lock") ? n.substring(0, n.length() - 5) : n;
                        if (GitLayout.mirrored(guarded)) {
                            names.add(guarded);
                        }
                    }
                }
                key.reset();
                for (String name : names) {
                    if (closed) {
                        return;
                    }
                    lock.lock();
                    try {
                        sync(stage, name);
                    } catch (Busy busy) {
                        // The lock's release is an event of its own: the name is synced then.
                    } catch (IOException e) {
                        warnings.accept("warning: cannot mirror "
                                + stage.relative().resolve(name) + ": " + IoErrors.message(e));
                    } finally {
                        lock.unlock();
                    }
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException stopped) {
            // The session ends: finish() does the last pass.
        }
    }

    /**
     * Brings one mirrored name of the copy and the host's directory together: the side that changed since the last
     * sync wins; when both did, neither is overwritten (the end's pass keeps the host's and quarantines the jail's).
     * What git never does is not mirrored from the jail: removing HEAD or the index, or a HEAD git would not read.
     */
    private void sync(Stage stage, String name) throws IOException {
        Content inCopy = read(stage.copy(), name);
        Content onHost = read(stage.real(), name);
        Content before = stage.last().getOrDefault(name, Content.ABSENT);
        if (inCopy == null || onHost == null) {
            return;
        }
        if (inCopy.same(onHost)) {
            stage.last().put(name, inCopy);
            return;
        }
        if (onHost.same(before)) {
            if (!plausible(stage, name, inCopy)) {
                return;
            }
            stage.last().put(name, transfer(stage.copy(), stage.real(), name, realOwner(stage)));
        } else if (inCopy.same(before)) {
            stage.last().put(name, transfer(stage.real(), stage.copy(), name, new int[] {ownerUid, ownerGid}));
        } else if (conflicts.add(stage.relative().resolve(name).toString())) {
            warnings.accept("warning: " + stage.relative().resolve(name) + " changed on the host and in the jail"
                    + " at once; the host's stays, the jail's goes into the quarantine when the session ends");
        }
    }

    /**
     * Whether git could have written the copy's {@code name} so: HEAD and the index are never removed, HEAD is a ref or
     * an object id, and an index (or a split index's shared part) holds only paths git would write into the working
     * tree ({@link IndexPaths}: an entry {@code .git/config} would be the user's next {@code git restore .}'s to write).
     */
    private boolean plausible(Stage stage, String name, Content content) throws IOException {
        boolean index = name.equals("index") || name.startsWith("sharedindex.");
        if (!name.equals("HEAD") && !index) {
            return true;
        }
        if (content.absent()) {
            return !name.equals("HEAD") && !name.equals("index");
        }
        ProjectFiles copy = ProjectFiles.of(stage.copy());
        if (name.equals("HEAD")) {
            String text = new String(copy.read(Path.of(name), 4096), StandardCharsets.US_ASCII);
            return HEAD_REF.matcher(text).matches();
        }
        Optional<String> problem;
        try (SeekableByteChannel in = copy.openFile(Path.of(name))) {
            problem = IndexPaths.check(java.nio.channels.Channels.newInputStream(in), in.size(), hashSize(stage));
        }
        if (problem.isPresent() && conflicts.add(stage.relative().resolve(name) + " refused")) {
            warnings.accept("warning: the jail's " + stage.relative().resolve(name) + " is not mirrored: "
                    + problem.get() + "; it goes into the quarantine when the session ends");
        }
        return problem.isEmpty();
    }

    /** The repository's object id size: 32 bytes where its config says extensions.objectFormat = sha256. */
    private static int hashSize(Stage stage) {
        try {
            String config =
                    new String(ProjectFiles.of(stage.real()).read(Path.of("config"), 1 << 20), StandardCharsets.UTF_8);
            return SHA256_FORMAT.matcher(config).find() ? 32 : 20;
        } catch (IOException unreadable) {
            return 20;
        }
    }

    /**
     * After the jail has exited: the last mirroring pass, and everything else the agent left in a copy moved into
     * {@code quarantine} (an operation in progress, such as an interrupted rebase, too: its state names what git runs
     * next, so it comes back only when the user restores it). Returns what was quarantined, one line each, as the
     * session-end record names findings. The copies are removed. Never throws: a failure is a finding.
     */
    public List<String> finish(Quarantine quarantine, String session) {
        closed = true;
        close();
        boolean locked;
        try {
            locked = lock.tryLock(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            locked = false;
        }
        if (!locked) {
            warnings.accept("warning: the metadata mirror is stalled (the agent swapped a fifo in?); the last pass goes"
                    + " on without it");
        }
        List<String> findings = new ArrayList<>();
        try {
            for (Stage stage : stages) {
                try {
                    finish(stage, quarantine, session, findings);
                } catch (IOException | RuntimeException e) {
                    findings.add("git-metadata " + stage.relative() + " not finished: " + IoErrors.message(e));
                    warnings.accept("warning: cannot bring back the jail's changes to "
                            + project.resolve(stage.relative()) + ": " + IoErrors.message(e)
                            + "; the session's copy stays"
                            + " in " + stage.copy());
                    continue;
                }
                removeCopy(stage);
                for (String name : stage.made()) {
                    try {
                        ProjectFiles.of(stage.real()).deleteIfEmpty(Path.of(name), ProjectFiles.Type.DIRECTORY);
                    } catch (IOException e) {
                        warnings.accept(
                                "warning: cannot remove " + stage.real().resolve(name) + ": " + IoErrors.message(e));
                    }
                }
            }
        } finally {
            if (locked) {
                lock.unlock();
            }
        }
        return List.copyOf(findings);
    }

    private void finish(Stage stage, Quarantine quarantine, String session, List<String> findings) throws IOException {
        ProjectFiles copy = ProjectFiles.of(stage.copy());
        ProjectFiles real = ProjectFiles.of(stage.real());
        List<String> left = new ArrayList<>();
        try (var list = Files.newDirectoryStream(stage.copy())) {
            for (Path entry : list) {
                left.add(entry.getFileName().toString());
            }
        }
        left.sort(Comparator.naturalOrder());
        Set<String> names = new HashSet<>(stage.last().keySet());
        left.stream().filter(GitLayout::mirrored).forEach(names::add);
        for (String name : names) {
            syncAtEnd(stage, name);
        }
        for (String name : stage.mounts()) {
            if (GitLayout.WRITABLE_DIRS.contains(name)
                    && real.attributes(Path.of(name)).isPresent()) {
                checkDataDir(stage, name, quarantine, session, findings);
            }
        }
        // A state directory the jail's git removed (a rebase that finished): judged before anything moves out.
        List<String> removed = new ArrayList<>();
        for (String name : stage.stateDirs().keySet()) {
            if (!left.contains(name)) {
                removed.add(name);
            }
        }
        List<String> quarantined = new ArrayList<>();
        for (String name : left) {
            Path path = Path.of(name);
            Optional<PosixFileAttributes> a = copy.attributes(path);
            if (stage.mounts().contains(name) || GitLayout.ephemeral(name) || a.isEmpty()) {
                continue;
            }
            if (GitLayout.mirrored(name)) {
                Content inCopy = read(stage.copy(), name);
                Content onHost = read(stage.real(), name);
                if (inCopy != null && onHost != null && inCopy.same(onHost)) {
                    continue;
                }
                // Not a file, too large, refused (a HEAD git would not write), or a conflict: the host keeps its own.
            }
            if (GitLayout.STATE_DIRS.contains(name)
                    && a.get().isDirectory()
                    && stage.stateDirs().containsKey(name)
                    && Quarantine.digest(copy, path, MAX_HASH_BYTES)
                            .equals(stage.stateDirs().get(name))) {
                continue;
            }
            if (stage.copied().contains(name)
                    && a.get().isSymbolicLink()
                    && copy.readLink(path)
                            .equals(Files.readSymbolicLink(stage.real().resolve(name)))) {
                continue;
            }
            quarantined.add(name);
        }
        // A state directory the jail's git removed (a rebase that finished) goes on the host too, unless the host's
        // own git changed it meanwhile: removing runs nothing.
        for (String name : removed) {
            Path path = Path.of(name);
            Optional<String> was = stage.stateDirs().get(name);
            if (was.isPresent()
                    && real.attributes(path).isPresent()
                    && Quarantine.digest(real, path, MAX_HASH_BYTES).equals(was)) {
                real.deleteTree(path, MAX_STATE_DEPTH + 1, MAX_STATE_ENTRIES);
            }
        }
        if (quarantined.size() > MAX_ITEMS) {
            // Thousands of names: one item, the copy as a whole, rather than a manifest (and a record) of each.
            Path whole = Path.of(stage.copy().getFileName().toString());
            quarantine(
                    stage,
                    quarantine,
                    session,
                    real,
                    whole,
                    SurfaceReview.Change.NEW,
                    quarantined.size() + " entries the agent put in the metadata directory",
                    findings);
            return;
        }
        for (String name : quarantined) {
            Path path = Path.of(name);
            quarantine(
                    stage,
                    quarantine,
                    session,
                    copy,
                    path,
                    stage.copied().contains(name) || real.attributes(path).isPresent()
                            ? SurfaceReview.Change.CHANGED
                            : SurfaceReview.Change.NEW,
                    GitLayout.STATE_DIRS.contains(name)
                            ? "an operation in progress the agent left; restore it to continue it"
                            : "written in the jail, never on the host",
                    findings);
        }
    }

    /**
     * Quarantines what the agent left in one of git's data directories (bound writable from the host) that host git
     * would follow: a symbolic link (a reflog append follows one, a ref update writes its lock file into a linked
     * directory), a fifo, a socket or a device, made or changed during the session (by change time; the user's own
     * stay). Loose objects' fan-out directories are not entered: git only reads and renames there. A directory with
     * more entries than the bound is quarantined whole and left empty, restorable: it was not checked.
     */
    private void checkDataDir(Stage stage, String name, Quarantine quarantine, String session, List<String> findings)
            throws IOException {
        ProjectFiles real = ProjectFiles.of(stage.real());
        List<Path> found = new ArrayList<>();
        try {
            real.walk(Path.of(name), 64, MAX_DATA_ENTRIES, (relative, attributes) -> {
                String last = relative.getFileName().toString();
                if (last.startsWith(STAGE_PREFIX)) {
                    return ProjectFiles.Visit.SKIP_SUBTREE;
                }
                if (attributes.isDirectory()) {
                    Path parent = relative.getParent();
                    boolean objectsDir =
                            parent != null && parent.getFileName().toString().equals("objects");
                    return objectsDir && (OBJECT_FANOUT.matcher(last).matches() || last.equals("pack"))
                            ? ProjectFiles.Visit.SKIP_SUBTREE
                            : ProjectFiles.Visit.CONTINUE;
                }
                if (!attributes.isRegularFile()
                        && SurfaceReview.ctime(stage.real().resolve(relative)).compareTo(started) > 0) {
                    found.add(relative);
                }
                return ProjectFiles.Visit.CONTINUE;
            });
        } catch (WalkLimitException flooded) {
            Path dir = Path.of(name);
            String what = "more entries than could be checked (" + flooded.getMessage() + ")";
            quarantine(stage, quarantine, session, real, dir, SurfaceReview.Change.CHANGED, what, findings);
            Files.createDirectory(stage.real().resolve(name));
            return;
        }
        for (Path relative : found) {
            if (findings.size() > MAX_ITEMS * 4) {
                break;
            }
            String what = "a link or special file in git's data, which host git would follow";
            quarantine(stage, quarantine, session, real, relative, SurfaceReview.Change.NEW, what, findings);
        }
    }

    /**
     * Moves {@code path} below {@code source} (the copy, or the host's directory) into the quarantine as {@code
     * stage/path} of the project, and reports it.
     */
    private void quarantine(
            Stage stage,
            Quarantine quarantine,
            String session,
            ProjectFiles source,
            Path path,
            SurfaceReview.Change change,
            String what,
            List<String> findings)
            throws IOException {
        Quarantine.Item item = quarantine.put(
                session,
                project,
                "project",
                project,
                stage.relative().resolve(path),
                SurfaceKind.GIT_METADATA,
                change,
                MAX_HASH_BYTES,
                source,
                path);
        report(quarantine, session, item, what, findings);
    }

    /** The end's pass over one name: a lock git left behind is waited for a little, then the host's version stays. */
    private void syncAtEnd(Stage stage, String name) {
        for (int attempt = 0; ; attempt++) {
            try {
                sync(stage, name);
                return;
            } catch (Busy busy) {
                if (attempt >= 30) {
                    warnings.accept("warning: " + busy.getMessage() + "; the jail's "
                            + stage.relative().resolve(name) + " goes into the quarantine instead");
                    return;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            } catch (IOException e) {
                warnings.accept(
                        "warning: cannot mirror " + stage.relative().resolve(name) + ": " + IoErrors.message(e));
                return;
            }
        }
    }

    private void report(
            Quarantine quarantine, String session, Quarantine.Item item, String what, List<String> findings) {
        String line = item.change().name().toLowerCase(Locale.ROOT) + " " + SurfaceKind.GIT_METADATA.code() + " "
                + project.resolve(item.path()) + " quarantined "
                + quarantine.directory().resolve(session).resolve(item.item());
        findings.add(line);
        warnings.accept(line + " (" + what + ")");
    }

    /** Stops the mirror (idempotent); {@link #finish} calls it. */
    @Override
    public void close() {
        closed = true;
        if (watcher != null) {
            try {
                watcher.close();
            } catch (IOException ignored) {
                // Closing a watch service does not fail in a way that matters here.
            }
        }
        if (thread != null) {
            try {
                // A read the agent stalled (a fifo swapped in after the check) cannot be waited for.
                thread.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Removes the copies made so far, and the directories made for them (when the session does not start). */
    public void removeCopies() {
        for (Stage stage : stages) {
            removeCopy(stage);
            for (String name : stage.made()) {
                try {
                    ProjectFiles.of(stage.real()).deleteIfEmpty(Path.of(name), ProjectFiles.Type.DIRECTORY);
                } catch (IOException ignored) {
                    // Best effort: an empty directory git tolerates.
                }
            }
        }
    }

    private void removeCopy(Stage stage) {
        try {
            ProjectFiles.of(stage.real())
                    .deleteTree(Path.of(stage.copy().getFileName().toString()), 64, 10_000_000);
        } catch (IOException e) {
            warnings.accept("warning: cannot remove " + stage.copy() + ": " + IoErrors.message(e));
        }
    }

    /**
     * A mirrored file's content, by digest, never following a link; null when it is something else than a file (a
     * directory or a link the agent put there) or larger than {@link #MAX_FILE_BYTES}: never mirrored.
     */
    private static Content read(Path dir, String name) throws IOException {
        ProjectFiles files = ProjectFiles.of(dir);
        Optional<PosixFileAttributes> a = files.attributes(Path.of(name));
        if (a.isEmpty()) {
            return Content.ABSENT;
        }
        if (!a.get().isRegularFile() || a.get().size() > MAX_FILE_BYTES) {
            return null;
        }
        MessageDigest sha = Quarantine.sha256();
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        long total = 0;
        try (SeekableByteChannel in = files.openFile(Path.of(name))) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                total += n;
                if (total > MAX_FILE_BYTES) {
                    return null;
                }
                buffer.flip();
                sha.update(buffer);
                buffer.clear();
            }
        } catch (java.nio.file.NoSuchFileException gone) {
            return Content.ABSENT;
        }
        return new Content(Optional.of(HexFormat.of().formatHex(sha.digest())));
    }

    /**
     * Copies {@code name} from {@code from} to {@code to} as git replaces a file: into {@code name.lock} (created
     * exclusively, with its mode, never through a link), then renamed over the name; removes it when {@code from} has
     * none. A lock that exists is the other side's git at work: {@link Busy}. Returns the digest of what was copied,
     * which is what the other side holds now.
     */
    private static Content transfer(Path from, Path to, String name, int[] owner) throws IOException {
        ProjectFiles source = ProjectFiles.of(from);
        Optional<PosixFileAttributes> a = source.attributes(Path.of(name));
        if (a.isEmpty()) {
            Optional<PosixFileAttributes> target = ProjectFiles.of(to).attributes(Path.of(name));
            if (target.isPresent() && target.get().isRegularFile()) {
                Files.deleteIfExists(to.resolve(name));
            }
            return Content.ABSENT;
        }
        Path lockFile = to.resolve(name + ".lock");
        MessageDigest sha = Quarantine.sha256();
        try (SeekableByteChannel in = source.openFile(Path.of(name));
                SeekableByteChannel out = Files.newByteChannel(
                        lockFile,
                        Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")))) {
            ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
            long total = 0;
            int n;
            while ((n = in.read(buffer)) >= 0) {
                total += n;
                if (total > MAX_FILE_BYTES) {
                    throw new IOException(from.resolve(name) + " grew past " + MAX_FILE_BYTES + " bytes");
                }
                buffer.flip();
                sha.update(buffer.duplicate());
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                buffer.clear();
            }
        } catch (java.nio.file.FileAlreadyExistsException locked) {
            throw new Busy(lockFile);
        } catch (IOException e) {
            Files.deleteIfExists(lockFile);
            throw e;
        }
        try {
            own(lockFile, owner[0], owner[1]);
            Files.move(lockFile, to.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            Files.deleteIfExists(lockFile);
            throw e;
        }
        return new Content(Optional.of(HexFormat.of().formatHex(sha.digest())));
    }

    private static int[] realOwner(Stage stage) throws IOException {
        return new int[] {
            (Integer) Files.getAttribute(stage.real(), "unix:uid", LinkOption.NOFOLLOW_LINKS),
            (Integer) Files.getAttribute(stage.real(), "unix:gid", LinkOption.NOFOLLOW_LINKS)
        };
    }

    /**
     * Hands an entry to {@code uid}/{@code gid}, never following a link (only root can, and only root needs to:
     * others own what they make).
     */
    private static void own(Path path, int uid, int gid) throws IOException {
        if ((Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS) != uid
                || (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS) != gid) {
            Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(path, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
        }
    }
}
