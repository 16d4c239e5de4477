package dev.agentjail.jail;

import java.io.IOException;
import java.io.OutputStream;
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
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What {@link #prepare} returns: the protected paths to hand bwrap, and the stages to mirror and finish. */
    public record Plan(List<ProtectedPath> protectedPaths, GitStages stages) {}

    /** A file's content as last seen on both sides: empty when there was no such file. */
    private record Content(Optional<byte[]> bytes) {
        static final Content ABSENT = new Content(Optional.empty());

        boolean same(Content other) {
            return bytes.isPresent() == other.bytes.isPresent()
                    && (bytes.isEmpty() || Arrays.equals(bytes.get(), other.bytes.get()));
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
     * @param last each mirrored name's content as last synced
     */
    private record Stage(
            Path relative,
            Path real,
            Path copy,
            Set<String> mounts,
            Set<String> copied,
            Map<String, Optional<String>> stateDirs,
            Map<String, Content> last) {}

    private final Path project;
    private final List<Stage> stages;
    private final int ownerUid;
    private final int ownerGid;
    private final Consumer<String> warnings;
    private final Set<String> conflicts = new HashSet<>();
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
        Map<String, Optional<String>> stateDirs = new HashMap<>();
        Map<String, Content> last = new HashMap<>();
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
        ProjectFiles realFiles = ProjectFiles.of(real);
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
                byte[] bytes = realFiles.read(Path.of(name), MAX_FILE_BYTES);
                write(copy, name, bytes, ownerUid, ownerGid);
                last.put(name, new Content(Optional.of(bytes)));
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
        return new Stage(relative, real, copy, Set.copyOf(mounts), Set.copyOf(copied), stateDirs, last);
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
                byte[] bytes = from.read(relative, MAX_FILE_BYTES);
                write(target.getParent(), target.getFileName().toString(), bytes, ownerUid, ownerGid);
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
            while (true) {
                WatchKey key = watcher.take();
                Stage stage = keys.get(key);
                Set<String> names = new HashSet<>();
                for (WatchEvent<?> event : key.pollEvents()) {
                    if (event.context() instanceof Path name && GitLayout.mirrored(name.toString())) {
                        names.add(name.toString());
                    }
                }
                key.reset();
                for (String name : names) {
                    sync(stage, name);
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException stopped) {
            // The session ends: finish() does the last pass.
        }
    }

    /**
     * Brings one mirrored name of the copy and the host's directory together: the side that changed since the last
     * sync wins; when both did, the host's is kept and the jail's version is set aside as a conflict.
     */
    private synchronized void sync(Stage stage, String name) {
        try {
            Content inCopy = read(stage.copy(), name);
            Content onHost = read(stage.real(), name);
            Content before = stage.last().getOrDefault(name, Content.ABSENT);
            if (inCopy == null || onHost == null || inCopy.same(onHost)) {
                if (inCopy != null && onHost != null) {
                    stage.last().put(name, inCopy);
                }
                return;
            }
            if (onHost.same(before)) {
                put(stage.real(), name, inCopy, realOwner(stage));
                stage.last().put(name, inCopy);
            } else if (inCopy.same(before)) {
                put(stage.copy(), name, onHost, new int[] {ownerUid, ownerGid});
                stage.last().put(name, onHost);
            } else if (conflicts.add(stage.relative().resolve(name).toString())) {
                // Both changed: neither is overwritten; after the session the host's stays, the jail's is quarantined.
                warnings.accept("warning: " + stage.relative().resolve(name) + " changed on the host and in the jail"
                        + " at once; the host's stays, the jail's goes into the quarantine when the session ends");
            }
        } catch (IOException e) {
            warnings.accept("warning: cannot mirror " + stage.relative().resolve(name) + ": " + e.getMessage());
        }
    }

    /**
     * After the jail has exited: the last mirroring pass, the state directories copied back, and everything else the
     * agent left in a copy moved into {@code quarantine}. Returns what was quarantined or refused, one line each, as
     * the session-end record names findings. The copies are removed.
     */
    public List<String> finish(Quarantine quarantine, String session) {
        close();
        List<String> findings = new ArrayList<>();
        for (Stage stage : stages) {
            try {
                finish(stage, quarantine, session, findings);
            } catch (IOException | RuntimeException e) {
                findings.add("git-metadata " + stage.relative() + " not finished: " + e.getMessage());
                warnings.accept("warning: cannot bring back the jail's changes to " + project.resolve(stage.relative())
                        + ": " + e.getMessage() + "; the session's copy stays in " + stage.copy());
                continue;
            }
            try {
                ProjectFiles.of(stage.real())
                        .deleteTree(Path.of(stage.copy().getFileName().toString()), 64, 1_000_000);
            } catch (IOException e) {
                warnings.accept("warning: cannot remove " + stage.copy() + ": " + e.getMessage());
            }
        }
        return List.copyOf(findings);
    }

    private void finish(Stage stage, Quarantine quarantine, String session, List<String> findings) throws IOException {
        ProjectFiles copy = ProjectFiles.of(stage.copy());
        ProjectFiles real = ProjectFiles.of(stage.real());
        Set<String> names = new HashSet<>(stage.last().keySet());
        List<String> left = new ArrayList<>();
        try (var list = Files.newDirectoryStream(stage.copy())) {
            for (Path entry : list) {
                left.add(entry.getFileName().toString());
            }
        }
        left.sort(Comparator.naturalOrder());
        for (String name : left) {
            if (GitLayout.mirrored(name)) {
                names.add(name);
            }
        }
        for (String name : names) {
            sync(stage, name);
        }
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
                // Not a file, too large, or a conflict: the host keeps its own, the jail's is set aside.
            }
            if (GitLayout.STATE_DIRS.contains(name) && a.get().isDirectory()) {
                Optional<String> now = Quarantine.digest(copy, path, MAX_HASH_BYTES);
                Optional<String> was = stage.stateDirs().getOrDefault(name, Optional.empty());
                boolean existed = stage.stateDirs().containsKey(name);
                if (existed && now.isPresent() && now.equals(was)) {
                    continue;
                }
                Optional<PosixFileAttributes> host = real.attributes(path);
                boolean hostUnchanged = existed
                        ? host.isPresent()
                                && Quarantine.digest(real, path, MAX_HASH_BYTES).equals(was)
                        : host.isEmpty();
                if (hostUnchanged && now.isPresent()) {
                    real.deleteTree(path, MAX_STATE_DEPTH + 1, MAX_STATE_ENTRIES);
                    copy.move(path, real, path, MAX_STATE_DEPTH + 1, MAX_STATE_ENTRIES);
                    continue;
                }
            }
            if (stage.copied().contains(name)
                    && a.get().isSymbolicLink()
                    && copy.readLink(path)
                            .equals(Files.readSymbolicLink(stage.real().resolve(name)))) {
                continue;
            }
            Quarantine.Item item = quarantine.put(
                    session,
                    project,
                    "project",
                    project,
                    stage.relative().resolve(name),
                    SurfaceKind.GIT_METADATA,
                    stage.copied().contains(name) || real.attributes(path).isPresent()
                            ? SurfaceReview.Change.CHANGED
                            : SurfaceReview.Change.NEW,
                    MAX_HASH_BYTES,
                    copy,
                    path);
            String line = item.change().name().toLowerCase(Locale.ROOT) + " "
                    + SurfaceKind.GIT_METADATA.code() + " " + project.resolve(item.path())
                    + " quarantined "
                    + quarantine.directory().resolve(session).resolve(item.item());
            findings.add(line);
            warnings.accept(line.replace(" quarantined ", " (written in the jail, never on the host) quarantined "));
        }
        // A state directory the jail's git removed (a rebase that finished) goes on the host too, unless the host's
        // own git changed it meanwhile.
        for (Map.Entry<String, Optional<String>> e : stage.stateDirs().entrySet()) {
            Path path = Path.of(e.getKey());
            if (copy.attributes(path).isEmpty()
                    && e.getValue().isPresent()
                    && real.attributes(path).isPresent()
                    && Quarantine.digest(real, path, MAX_HASH_BYTES).equals(e.getValue())) {
                real.deleteTree(path, MAX_STATE_DEPTH + 1, MAX_STATE_ENTRIES);
            }
        }
    }

    /** Stops the mirror (idempotent); {@link #finish} calls it. */
    @Override
    public void close() {
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

    /** Removes the copies made so far (when the session does not start). */
    public void removeCopies() {
        for (Stage stage : stages) {
            try {
                ProjectFiles.of(stage.real())
                        .deleteTree(Path.of(stage.copy().getFileName().toString()), 64, 1_000_000);
            } catch (IOException ignored) {
                // Best effort: the session did not start.
            }
        }
    }

    /**
     * A mirrored file's content, never following a link; null when it is something else than a file (a directory or a
     * link the agent put there), which is never mirrored.
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
        return new Content(Optional.of(files.read(Path.of(name), MAX_FILE_BYTES)));
    }

    /** Replaces (or removes) {@code name} in {@code dir} by a rename, so a reader never sees half of it. */
    private static void put(Path dir, String name, Content content, int[] owner) throws IOException {
        if (content.bytes().isEmpty()) {
            Optional<PosixFileAttributes> a = ProjectFiles.of(dir).attributes(Path.of(name));
            if (a.isPresent() && a.get().isRegularFile()) {
                Files.deleteIfExists(dir.resolve(name));
            }
            return;
        }
        write(dir, name, content.bytes().get(), owner[0], owner[1]);
    }

    private static void write(Path dir, String name, byte[] bytes, int uid, int gid) throws IOException {
        Path temp = dir.resolve(".agentjail-" + HexFormat.of().formatHex(randomBytes(8)) + ".tmp");
        try (OutputStream out = Files.newOutputStream(
                temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            out.write(bytes);
        }
        try {
            Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-r--r--"));
            own(temp, uid, gid);
            Files.move(temp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
    }

    private static byte[] randomBytes(int n) {
        byte[] bytes = new byte[n];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    private static int[] realOwner(Stage stage) throws IOException {
        return new int[] {
            (Integer) Files.getAttribute(stage.real(), "unix:uid", LinkOption.NOFOLLOW_LINKS),
            (Integer) Files.getAttribute(stage.real(), "unix:gid", LinkOption.NOFOLLOW_LINKS)
        };
    }

    /** Hands an entry to {@code uid}/{@code gid} (only root can, and only root needs to: others own what they make). */
    private static void own(Path path, int uid, int gid) throws IOException {
        if ((Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS) != uid
                || (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS) != gid) {
            Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(path, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
        }
    }
}
