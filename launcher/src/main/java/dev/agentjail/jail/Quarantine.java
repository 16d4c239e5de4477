package dev.agentjail.jail;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The quarantine: where {@link SurfaceReview} moves what a session left on host-executed surfaces, one directory per
 * session ({@code <dir>/<session>/<root kind>/<path>}) with a manifest ({@code manifest.jsonl}, one JSON object per
 * item) that says where each item came from, so that it can be restored or discarded.
 */
public final class Quarantine {
    /** The manifest's name in a session's quarantine directory. */
    public static final String MANIFEST = "manifest.jsonl";

    private static final Pattern SESSION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    /** Bounds for moving a quarantined tree (a whole nested repository, say) in or out. */
    private static final int MAX_DEPTH = 256;

    private static final int MAX_ENTRIES = 1_000_000;
    private static final String PRIVATE_DIR = "rwx------";

    private final Path dir;
    private final Clock clock;

    /** The quarantine in {@code dir} (created when something is first put there). */
    public Quarantine(Path dir, Clock clock) {
        this.dir = JailPaths.absolute(dir.toAbsolutePath().normalize(), "quarantine directory");
        this.clock = clock;
    }

    /**
     * One quarantined item, as its manifest line records it.
     *
     * @param root the directory {@code path} is relative to: the project or an agent's home directory
     * @param rootKind "project", or "home/" and the directory below the home ({@code home/.claude})
     * @param item where it lies below the session's quarantine directory: {@code rootKind/path}
     * @param sha256 of a file's bytes, a link's target, or a directory's listing with its files' digests; empty when
     *     it was too large to hash
     */
    public record Item(
            String session,
            Instant time,
            Path project,
            Path root,
            String rootKind,
            Path path,
            Path item,
            SurfaceKind kind,
            SurfaceReview.Change change,
            ProjectFiles.Type type,
            Optional<String> sha256) {
        /** How the CLI names it: {@code SESSION/ITEM}. */
        public String id() {
            return session + "/" + item;
        }

        /** Where it came from and goes back to. */
        public Path original() {
            return root.resolve(path);
        }

        Json.Obj toJson() {
            Map<String, Json> m = new LinkedHashMap<>();
            m.put("ts", new Json.Str(time.toString()));
            m.put("session", new Json.Str(session));
            m.put("project", new Json.Str(project.toString()));
            m.put("root", new Json.Str(root.toString()));
            m.put("root_kind", new Json.Str(rootKind));
            m.put("path", new Json.Str(path.toString()));
            m.put("item", new Json.Str(item.toString()));
            m.put("kind", new Json.Str(kind.code()));
            m.put("change", new Json.Str(change.name().toLowerCase(Locale.ROOT)));
            m.put("type", new Json.Str(type.name().toLowerCase(Locale.ROOT)));
            m.put("sha256", sha256.<Json>map(Json.Str::new).orElse(Json.Null.INSTANCE));
            return new Json.Obj(m);
        }

        static Item fromJson(Json.Obj o) {
            String sha = o.string("sha256");
            return new Item(
                    required(o, "session"),
                    Instant.parse(required(o, "ts")),
                    Path.of(required(o, "project")),
                    Path.of(required(o, "root")),
                    required(o, "root_kind"),
                    Path.of(required(o, "path")),
                    Path.of(required(o, "item")),
                    SurfaceKind.ofCode(required(o, "kind")),
                    SurfaceReview.Change.valueOf(required(o, "change").toUpperCase(Locale.ROOT)),
                    ProjectFiles.Type.valueOf(required(o, "type").toUpperCase(Locale.ROOT)),
                    Optional.ofNullable(sha));
        }

        private static String required(Json.Obj o, String name) {
            String v = o.string(name);
            if (v == null) {
                throw new IllegalArgumentException("no \"" + name + "\"");
            }
            return v;
        }
    }

    public Path directory() {
        return dir;
    }

    /**
     * Moves {@code relative} below {@code root} (never following a link, see {@link ProjectFiles#move}) to {@code
     * <session>/<rootKind>/<relative>} and records it in the session's manifest. The digest is taken from the moved
     * copy, which nothing else can change any more, hashing at most {@code maxHashBytes}.
     */
    public Item put(
            String session,
            Path project,
            String rootKind,
            Path root,
            Path relative,
            SurfaceKind kind,
            SurfaceReview.Change change,
            long maxHashBytes)
            throws IOException {
        return put(
                session,
                project,
                rootKind,
                root,
                relative,
                kind,
                change,
                maxHashBytes,
                ProjectFiles.of(root),
                relative);
    }

    /**
     * As above, for an item that was written somewhere else than where it goes back to: {@code sourceRelative} below
     * {@code source} is moved, and the manifest records {@code relative} below {@code root} as its original place (a
     * {@code commondir} the agent wrote in the session's copy of a metadata directory goes back to the host's).
     */
    public Item put(
            String session,
            Path project,
            String rootKind,
            Path root,
            Path relative,
            SurfaceKind kind,
            SurfaceReview.Change change,
            long maxHashBytes,
            ProjectFiles source,
            Path sourceRelative)
            throws IOException {
        Instant time = clock.instant();
        Path sessionDir = privateDir(session);
        Path item = Path.of(rootKind).resolve(relative);
        JailPaths.relative(item, "quarantined item");
        ProjectFiles quarantined = ProjectFiles.of(sessionDir);
        quarantined.createDirectories(item.getParent());
        source.move(sourceRelative, quarantined, item, MAX_DEPTH, MAX_ENTRIES);
        ProjectFiles.Type type =
                ProjectFiles.Type.of(quarantined.attributes(item).orElseThrow());
        Item recorded = new Item(
                session,
                time,
                project,
                root,
                rootKind,
                relative,
                item,
                kind,
                change,
                type,
                digest(quarantined, item, maxHashBytes));
        append(sessionDir.resolve(MANIFEST), recorded);
        return recorded;
    }

    /** The file in a session's quarantine directory that marks its review as unfinished. */
    public static final String PENDING = "pending.json";

    /**
     * A session whose review reached its bounds: what lies beyond them was not checked, and {@code agentjail review
     * --finish} must sweep the trees before host tools read them (and before the next session on the project starts).
     *
     * @param since the session's start: a surface changed at or after it (ctime) counts as the agent's
     */
    public record Pending(String session, Path project, List<SurfaceReview.Root> roots, Instant since, String reason) {
        public Pending {
            roots = List.copyOf(roots);
        }
    }

    /** Records that {@code pending}'s review is unfinished (replacing an earlier record of the session). */
    public void markPending(Pending pending) throws IOException {
        Path sessionDir = privateDir(pending.session());
        List<Json> roots = new ArrayList<>();
        for (SurfaceReview.Root r : pending.roots()) {
            roots.add(new Json.Obj(Map.of(
                    "kind", new Json.Str(r.kind()), "dir", new Json.Str(r.dir().toString()))));
        }
        Map<String, Json> m = new LinkedHashMap<>();
        m.put("session", new Json.Str(pending.session()));
        m.put("project", new Json.Str(pending.project().toString()));
        m.put("since", new Json.Str(pending.since().toString()));
        m.put("reason", new Json.Str(pending.reason()));
        m.put("roots", new Json.Arr(roots));
        Path temp = sessionDir.resolve(PENDING + ".tmp");
        Files.deleteIfExists(temp);
        Files.writeString(temp, new Json.Obj(m).text() + "\n", StandardOpenOption.CREATE_NEW);
        Files.move(
                temp, sessionDir.resolve(PENDING), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Marks the session's review as finished. */
    public void clearPending(String session) throws IOException {
        Files.deleteIfExists(sessionDir(session).resolve(PENDING));
    }

    /**
     * Every unfinished review, oldest first. A record that cannot be read is returned as pending for every project
     * ({@code project} "/"): failing closed, it is named rather than passed over.
     */
    public List<Pending> pending() throws IOException {
        List<Pending> all = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return all;
        }
        try (var sessions = Files.newDirectoryStream(dir)) {
            for (Path s : sessions) {
                String name = s.getFileName().toString();
                Path file = s.resolve(PENDING);
                if (!SESSION.matcher(name).matches() || !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                try {
                    Json.Obj o = (Json.Obj) JsonReader.parse(Files.readAllBytes(file));
                    List<SurfaceReview.Root> roots = new ArrayList<>();
                    for (Json r : ((Json.Arr) o.get("roots")).items()) {
                        Json.Obj root = (Json.Obj) r;
                        roots.add(new SurfaceReview.Root(root.string("kind"), Path.of(root.string("dir"))));
                    }
                    all.add(new Pending(
                            name,
                            Path.of(o.string("project")),
                            roots,
                            Instant.parse(o.string("since")),
                            String.valueOf(o.string("reason"))));
                } catch (JsonException | RuntimeException unreadable) {
                    all.add(new Pending(name, Path.of("/"), List.of(), Instant.EPOCH, "unreadable " + file));
                }
            }
        }
        all.sort(Comparator.comparing(Pending::since).thenComparing(Pending::session));
        return all;
    }

    /** Every quarantined item of every session, newest first. */
    public List<Item> list() throws IOException {
        List<Item> items = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return items;
        }
        try (var sessions = Files.newDirectoryStream(dir)) {
            for (Path s : sessions) {
                String name = s.getFileName().toString();
                if (SESSION.matcher(name).matches()
                        && Files.isRegularFile(s.resolve(MANIFEST), LinkOption.NOFOLLOW_LINKS)) {
                    items.addAll(items(name));
                }
            }
        }
        items.sort(Comparator.comparing(Item::time)
                .reversed()
                .thenComparing(Item::session)
                .thenComparing(Item::item));
        return items;
    }

    /** The items of one session, in the order they were quarantined; fails when there is no such session. */
    public List<Item> items(String session) throws IOException {
        Path manifest = sessionDir(session).resolve(MANIFEST);
        if (!Files.isRegularFile(manifest, LinkOption.NOFOLLOW_LINKS)) {
            throw new NoSuchFileException(sessionDir(session).toString(), null, "no quarantine of session " + session);
        }
        List<Item> items = new ArrayList<>();
        List<String> lines = Files.readAllLines(manifest, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            try {
                if (!(JsonReader.parse(lines.get(i).getBytes(StandardCharsets.UTF_8)) instanceof Json.Obj o)) {
                    throw new IllegalArgumentException("not an object");
                }
                items.add(Item.fromJson(o));
            } catch (JsonException | RuntimeException e) {
                throw new IOException(manifest + " line " + (i + 1) + " is malformed: " + e.getMessage(), e);
            }
        }
        return items;
    }

    /**
     * Moves the session's items whose {@link Item#item()} is {@code prefix} or lies below it (all of them when empty;
     * failing that, those whose original {@link Item#path()} does) back to where they came from, recreating missing
     * parent directories. If an original path exists, nothing is moved unless {@code force}, which deletes what is
     * there first. Returns the items restored; the manifest keeps the rest, and an emptied session is removed.
     */
    public List<Item> restore(String session, Optional<Path> prefix, boolean force) throws IOException {
        List<Item> all = items(session);
        List<Item> chosen = all.stream()
                .filter(i -> prefix.isEmpty() || i.item().startsWith(prefix.get()))
                .toList();
        if (chosen.isEmpty() && prefix.isPresent()) {
            chosen = all.stream().filter(i -> i.path().startsWith(prefix.get())).toList();
        }
        if (chosen.isEmpty()) {
            throw new NoSuchFileException(
                    sessionDir(session).toString(),
                    null,
                    "session " + session + " has no quarantined item "
                            + prefix.map(Path::toString).orElse(""));
        }
        List<Path> occupied = new ArrayList<>();
        for (Item i : chosen) {
            if (Files.isDirectory(i.root(), LinkOption.NOFOLLOW_LINKS)
                    && ProjectFiles.of(i.root()).attributes(i.path()).isPresent()) {
                occupied.add(i.original());
            }
        }
        if (!occupied.isEmpty() && !force) {
            throw new FileAlreadyExistsException(
                    occupied.get(0).toString(),
                    null,
                    "exists (" + occupied.size() + " of the " + chosen.size()
                            + " paths to restore do); nothing was restored; --force replaces what is there");
        }
        ProjectFiles quarantined = ProjectFiles.of(sessionDir(session));
        List<Item> remaining = new ArrayList<>(all);
        List<Item> restored = new ArrayList<>();
        for (Item i : chosen) {
            Files.createDirectories(i.root());
            ProjectFiles target = ProjectFiles.of(i.root());
            if (force) {
                target.deleteTree(i.path(), MAX_DEPTH, MAX_ENTRIES);
            }
            Path parent = i.path().getParent();
            if (parent != null) {
                target.createDirectories(parent);
            }
            quarantined.move(i.item(), target, i.path(), MAX_DEPTH, MAX_ENTRIES);
            restored.add(i);
            remaining.remove(i);
            // After each item, so that the manifest stays true if a later one fails.
            rewrite(session, remaining);
        }
        return restored;
    }

    /** Deletes the session's quarantine, never following a link in it; returns what it held. */
    public List<Item> discard(String session) throws IOException {
        List<Item> items = items(session);
        ProjectFiles.of(dir).deleteTree(Path.of(session), MAX_DEPTH, MAX_ENTRIES);
        return items;
    }

    private void rewrite(String session, List<Item> remaining) throws IOException {
        Path sessionDir = sessionDir(session);
        if (remaining.isEmpty()) {
            ProjectFiles.of(dir).deleteTree(Path.of(session), MAX_DEPTH, MAX_ENTRIES);
            return;
        }
        Path temporary = sessionDir.resolve(MANIFEST + ".tmp");
        Files.deleteIfExists(temporary);
        for (Item i : remaining) {
            append(temporary, i);
        }
        Files.move(
                temporary,
                sessionDir.resolve(MANIFEST),
                StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    private Path sessionDir(String session) {
        if (!SESSION.matcher(session).matches()) {
            throw new IllegalArgumentException("not a session id: " + session);
        }
        return dir.resolve(session);
    }

    /** The session's directory, created 0700 (and the quarantine's) when missing; an existing one must not be a link. */
    private Path privateDir(String session) throws IOException {
        Path sessionDir = sessionDir(session);
        for (Path d : List.of(dir, sessionDir)) {
            if (Files.isSymbolicLink(d)) {
                throw new FileSystemException(d.toString(), null, "is a symbolic link; the quarantine must not be");
            }
            if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(d.getParent());
                Files.createDirectory(
                        d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(PRIVATE_DIR)));
            }
        }
        return sessionDir;
    }

    private static void append(Path manifest, Item item) throws IOException {
        byte[] line = (item.toJson().text() + "\n").getBytes(StandardCharsets.UTF_8);
        try (SeekableByteChannel out = Files.newByteChannel(
                manifest,
                Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ByteBuffer buffer = ByteBuffer.wrap(line);
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
        }
    }

    /**
     * A file's SHA-256, a link's (of its target), or a directory's: of one line per entry (type, path, and the entry's
     * own digest) in walk order. Empty when more than {@code maxBytes} would have to be read.
     */
    static Optional<String> digest(ProjectFiles files, Path item, long maxBytes) throws IOException {
        MessageDigest tree = sha256();
        long[] budget = {maxBytes};
        ProjectFiles.Type type = ProjectFiles.Type.of(files.attributes(item).orElseThrow());
        if (type != ProjectFiles.Type.DIRECTORY) {
            return entryDigest(files, item, type, budget);
        }
        try {
            files.walk(item, MAX_DEPTH, MAX_ENTRIES, (relative, attributes) -> {
                ProjectFiles.Type t = ProjectFiles.Type.of(attributes);
                Optional<String> d = entryDigest(files, relative, t, budget);
                if (d.isEmpty() && t != ProjectFiles.Type.DIRECTORY && t != ProjectFiles.Type.OTHER) {
                    throw new WalkLimitException(
                            WalkLimitException.Bound.BYTES,
                            maxBytes,
                            files.root().resolve(relative));
                }
                tree.update((t.name() + " " + item.relativize(relative) + " " + d.orElse("") + "\n")
                        .getBytes(StandardCharsets.UTF_8));
                return ProjectFiles.Visit.CONTINUE;
            });
        } catch (WalkLimitException tooLarge) {
            return Optional.empty();
        }
        return Optional.of(HexFormat.of().formatHex(tree.digest()));
    }

    private static Optional<String> entryDigest(
            ProjectFiles files, Path relative, ProjectFiles.Type type, long[] budget) throws IOException {
        switch (type) {
            case FILE -> {
                MessageDigest sha = sha256();
                ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
                try (SeekableByteChannel in = files.openFile(relative)) {
                    int n;
                    while ((n = in.read(buffer)) >= 0) {
                        budget[0] -= n;
                        if (budget[0] < 0) {
                            return Optional.empty();
                        }
                        buffer.flip();
                        sha.update(buffer);
                        buffer.clear();
                    }
                }
                return Optional.of(HexFormat.of().formatHex(sha.digest()));
            }
            case SYMLINK -> {
                return Optional.of(HexFormat.of()
                        .formatHex(sha256().digest(
                                        files.readLink(relative).toString().getBytes(StandardCharsets.UTF_8))));
            }
            default -> {
                return Optional.empty();
            }
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JDK", e);
        }
    }
}
