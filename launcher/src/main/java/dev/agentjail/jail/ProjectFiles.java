package dev.agentjail.jail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Host-side operations on paths below a trusted root directory (the project, an agent's home directory, the
 * quarantine) that never follow a symbolic link below that root, however the jailed agent rearranges the tree.
 *
 * <p>Every operation starts from a descriptor of the root and opens each further directory relative to its parent with
 * O_NOFOLLOW ({@link SecureDirectoryStream}: openat, fstatat, unlinkat, renameat on a directory descriptor), so a
 * directory swapped for a link between a check and the operation makes the operation fail with a {@link
 * LinkInPathException} instead of acting on the link's target. The root itself is trusted: it is opened by its path,
 * and its last component must not be a link.
 *
 * <p>What the JDK does not offer relative to a descriptor leaves residual races, each confined as described where it
 * occurs: {@link #stat}'s uid, mode, link count and ctime and {@link #readLink} read the path again and are accepted
 * only when it shows the same inode; {@link #createDirectories} and a {@link #move} to another file system create
 * directories and links by path (no mkdirat, no symlinkat) and then check the result through the parent's descriptor.
 * An entry swapped for a FIFO after the check that shows a directory or a regular file makes the open block (the JDK
 * passes no O_NONBLOCK): a stall, not an escape.
 */
public final class ProjectFiles {
    private static final Path SELF = Path.of("");
    private static final int COPY_BUFFER = 64 * 1024;

    private final Path root;

    private ProjectFiles(Path root) {
        this.root = JailPaths.absolute(root, "trusted root");
    }

    /** The operations below {@code root}, an absolute, normalized path to a directory. */
    public static ProjectFiles of(Path root) {
        return new ProjectFiles(root);
    }

    /** What an entry is, seen without following links. */
    public enum Type {
        FILE,
        DIRECTORY,
        SYMLINK,
        OTHER;

        public static Type of(BasicFileAttributes attributes) {
            if (attributes.isSymbolicLink()) {
                return SYMLINK;
            }
            if (attributes.isDirectory()) {
                return DIRECTORY;
            }
            return attributes.isRegularFile() ? FILE : OTHER;
        }
    }

    /**
     * An entry's attributes, not following links.
     *
     * @param mode the full st_mode (type, setuid/setgid/sticky and permission bits)
     * @param changed the ctime, which no unprivileged process can set back
     * @param fileKey the device and inode ({@link BasicFileAttributes#fileKey()})
     */
    public record Stat(
            Type type, long size, int uid, int mode, int nlink, FileTime modified, FileTime changed, Object fileKey) {}

    /** What {@link #deleteIfEmpty} did. */
    public enum Removal {
        DELETED,
        /** Present but not empty, or not of the expected type (a link included): left in place. */
        KEPT,
        ABSENT
    }

    /** What a {@link Visitor} wants done with a directory it was shown. */
    public enum Visit {
        CONTINUE,
        SKIP_SUBTREE
    }

    /** Sees each entry of a {@link #walk}, parents before their entries. */
    @FunctionalInterface
    public interface Visitor {
        /** An entry, with attributes read without following links; a directory is entered unless skipped. */
        Visit visit(Path relative, PosixFileAttributes attributes) throws IOException;

        /** Every entry of {@code directory} has been read (its entries are visited next). */
        default void listed(Path directory) throws IOException {}
    }

    public Path root() {
        return root;
    }

    /** The entry's attributes read through its parent's descriptor, or empty when there is no such entry. */
    public Optional<PosixFileAttributes> attributes(Path relative) throws IOException {
        if (isSelf(relative)) {
            try (SecureDirectoryStream<Path> dir = openRoot()) {
                return Optional.of(
                        dir.getFileAttributeView(PosixFileAttributeView.class).readAttributes());
            } catch (NoSuchFileException e) {
                return Optional.empty();
            }
        }
        requireBelow(relative);
        try (SecureDirectoryStream<Path> parent = openParent(relative)) {
            return Optional.of(lstat(parent, name(relative)));
        } catch (NoSuchFileException | NotDirectoryException e) {
            return Optional.empty();
        }
    }

    /**
     * The entry's attributes including uid, mode, link count and ctime, or empty when there is no such entry. The JDK
     * reads those only by path, so they are read after the entry was found through its parent's descriptor and accepted
     * only when the path shows the same inode; otherwise this fails.
     */
    public Optional<Stat> stat(Path relative) throws IOException {
        Optional<PosixFileAttributes> secure = attributes(relative);
        if (secure.isEmpty()) {
            return Optional.empty();
        }
        Path path = root.resolve(relative);
        Map<String, Object> unix;
        try {
            unix = Files.readAttributes(path, "unix:*", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw changedWhileRead(path);
        }
        if (!Objects.equals(unix.get("fileKey"), secure.get().fileKey())) {
            throw changedWhileRead(path);
        }
        PosixFileAttributes a = secure.get();
        return Optional.of(new Stat(
                Type.of(a),
                a.size(),
                (Integer) unix.get("uid"),
                (Integer) unix.get("mode"),
                (Integer) unix.get("nlink"),
                a.lastModifiedTime(),
                (FileTime) unix.get("ctime"),
                a.fileKey()));
    }

    /** Opens a regular file for reading through its parent's descriptor (O_NOFOLLOW); the caller closes it. */
    public SeekableByteChannel openFile(Path relative) throws IOException {
        requireBelow(relative);
        try (SecureDirectoryStream<Path> parent = openParent(relative)) {
            Path name = name(relative);
            PosixFileAttributes a = lstat(parent, name);
            if (a.isSymbolicLink()) {
                throw new LinkInPathException(root.resolve(relative));
            }
            if (!a.isRegularFile()) {
                throw new FileSystemException(root.resolve(relative).toString(), null, "not a regular file");
            }
            return openRead(parent, name, relative);
        }
    }

    /** A regular file's bytes; fails when it holds more than {@code maxBytes}. */
    public byte[] read(Path relative, int maxBytes) throws IOException {
        try (SeekableByteChannel channel = openFile(relative);
                InputStream in = Channels.newInputStream(channel)) {
            byte[] bytes = in.readNBytes(maxBytes + 1);
            if (bytes.length > maxBytes) {
                throw new FileSystemException(
                        root.resolve(relative).toString(), null, "larger than " + maxBytes + " bytes");
            }
            return bytes;
        }
    }

    /**
     * A link's target, as written. The JDK reads links only by path: the link is found through its parent's
     * descriptor first, and the answer is accepted only when the path still shows that link's inode.
     */
    public Path readLink(Path relative) throws IOException {
        requireBelow(relative);
        try (SecureDirectoryStream<Path> parent = openParent(relative)) {
            return readLink(parent, name(relative), relative);
        }
    }

    /**
     * Where a link below the root finally leads, as a path relative to the root with no link in it, or empty when it
     * dangles or leads outside the root. The link chain is followed once (it may pass outside the root and back); the
     * answer is then checked component by component without following links, and a link met there fails.
     */
    public Optional<Path> resolveLink(Path relative) throws IOException {
        requireBelow(relative);
        Path real;
        try {
            real = root.resolve(relative).toRealPath();
        } catch (FileSystemException danglingOrLooping) {
            return Optional.empty();
        }
        Path realRoot = root.toRealPath();
        if (!real.startsWith(realRoot)) {
            return Optional.empty();
        }
        Path inside = realRoot.relativize(real);
        return attributes(inside).isPresent() ? Optional.of(inside) : Optional.empty();
    }

    /**
     * Deletes the entry if it is of {@code type} ({@link Type#FILE} or {@link Type#DIRECTORY}) and empty: a regular
     * file of size 0, or a directory with no entries (unlinkat with AT_REMOVEDIR refuses any other). A file filled
     * between the size check and unlinkat is deleted all the same, but only ever the entry inside its verified parent.
     */
    public Removal deleteIfEmpty(Path relative, Type type) throws IOException {
        requireBelow(relative);
        if (type != Type.FILE && type != Type.DIRECTORY) {
            throw new IllegalArgumentException("only an empty file or directory can be deleted, not " + type);
        }
        SecureDirectoryStream<Path> parent;
        try {
            parent = openParent(relative);
        } catch (NoSuchFileException | NotDirectoryException e) {
            return Removal.ABSENT;
        }
        try (parent) {
            Path name = name(relative);
            PosixFileAttributes a = lstat(parent, name);
            if (type == Type.FILE && a.isRegularFile() && a.size() == 0) {
                parent.deleteFile(name);
                return Removal.DELETED;
            }
            if (type == Type.DIRECTORY && a.isDirectory()) {
                try {
                    parent.deleteDirectory(name);
                    return Removal.DELETED;
                } catch (DirectoryNotEmptyException e) {
                    return Removal.KEPT;
                }
            }
            return Removal.KEPT;
        } catch (NoSuchFileException e) {
            return Removal.ABSENT;
        }
    }

    /**
     * Deletes the entry and, if it is a directory, everything below it, never following a link (a link is deleted,
     * not its target). Fails at the first bound reached, having deleted part of the tree. Returns false when there was
     * no such entry.
     */
    public boolean deleteTree(Path relative, int maxDepth, int maxEntries) throws IOException {
        requireBelow(relative);
        SecureDirectoryStream<Path> parent;
        try {
            parent = openParent(relative);
        } catch (NoSuchFileException e) {
            return false;
        }
        try (parent) {
            return deleteEntry(parent, name(relative), relative, 0, new Budget(maxDepth, maxEntries));
        }
    }

    /**
     * Creates the directory and its missing parents. There is no mkdirat in the JDK: each missing directory is created
     * by path and then opened through its parent's descriptor, so a path that led elsewhere fails here (having created
     * at most an empty directory where it led).
     */
    public void createDirectories(Path relative) throws IOException {
        SecureDirectoryStream<Path> dir = openRoot();
        try {
            if (isSelf(relative)) {
                return;
            }
            requireBelow(relative);
            Path at = SELF;
            for (Path name : relative) {
                at = at.resolve(name);
                SecureDirectoryStream<Path> next;
                try {
                    next = openChild(dir, name, at);
                } catch (NoSuchFileException missing) {
                    try {
                        Files.createDirectory(root.resolve(at));
                    } catch (FileAlreadyExistsException raced) {
                        // Someone else made it: it is checked like one of ours.
                    }
                    next = openChild(dir, name, at);
                }
                dir.close();
                dir = next;
            }
        } finally {
            dir.close();
        }
    }

    /**
     * Moves the entry (whatever it is: a link moves as a link) to {@code targetRelative} below {@code target}'s root,
     * whose parent must exist; an existing target is refused. Within a file system this is one renameat; across file
     * systems the tree is copied (files through descriptors, directories and links by path and then checked, see the
     * class comment) and the original deleted, within the bounds. The existence check and renameat are two steps: an
     * entry created at the target in between is replaced.
     */
    public void move(Path relative, ProjectFiles target, Path targetRelative, int maxDepth, int maxEntries)
            throws IOException {
        requireBelow(relative);
        target.requireBelow(targetRelative);
        try (SecureDirectoryStream<Path> from = openParent(relative);
                SecureDirectoryStream<Path> to = target.openParent(targetRelative)) {
            Path name = name(relative);
            Path targetName = target.name(targetRelative);
            lstat(from, name);
            if (exists(to, targetName)) {
                throw new FileAlreadyExistsException(
                        target.root.resolve(targetRelative).toString());
            }
            try {
                from.move(name, to, targetName);
            } catch (AtomicMoveNotSupportedException otherFileSystem) {
                try {
                    copy(from, name, relative, to, target, targetRelative, 0, new Budget(maxDepth, maxEntries));
                } catch (IOException | RuntimeException e) {
                    try {
                        target.deleteEntry(to, targetName, targetRelative, 0, new Budget(maxDepth, maxEntries));
                    } catch (IOException cleanup) {
                        e.addSuppressed(cleanup);
                    }
                    throw e;
                }
                deleteEntry(from, name, relative, 0, new Budget(maxDepth, maxEntries));
            }
        }
    }

    /**
     * Walks the tree below {@code start} (the root itself when empty), parents first, each directory's entries in name
     * order, never following a link: a link is shown to the visitor as a link. Entries directly in {@code start} are at
     * depth 1. Reaching a bound (a non-empty directory at {@code maxDepth}, or more than {@code maxEntries} entries)
     * throws a {@link WalkLimitException}, never skips. An entry that disappears while it is walked is passed over;
     * anything else that cannot be read fails. Returns the number of entries seen.
     */
    public int walk(Path start, int maxDepth, int maxEntries, Visitor visitor) throws IOException {
        Budget budget = new Budget(maxDepth, maxEntries);
        try (SecureDirectoryStream<Path> dir = openDirectory(start)) {
            walk(dir, start, 1, budget, visitor);
        }
        return budget.entries;
    }

    private void walk(SecureDirectoryStream<Path> dir, Path relative, int depth, Budget budget, Visitor visitor)
            throws IOException {
        List<Path> names = list(dir, relative, budget);
        visitor.listed(relative);
        for (Path name : names) {
            Path child = relative.resolve(name);
            PosixFileAttributes a;
            try {
                a = lstat(dir, name);
            } catch (NoSuchFileException gone) {
                continue;
            }
            if (visitor.visit(child, a) != Visit.CONTINUE || !a.isDirectory()) {
                continue;
            }
            SecureDirectoryStream<Path> sub;
            try {
                sub = openChild(dir, name, child);
            } catch (NoSuchFileException | NotDirectoryException gone) {
                continue;
            }
            try (sub) {
                if (depth >= budget.maxDepth) {
                    if (sub.iterator().hasNext()) {
                        throw new WalkLimitException(
                                WalkLimitException.Bound.DEPTH, budget.maxDepth, root.resolve(child));
                    }
                    continue;
                }
                walk(sub, child, depth + 1, budget, visitor);
            }
        }
    }

    private boolean deleteEntry(SecureDirectoryStream<Path> parent, Path name, Path relative, int depth, Budget budget)
            throws IOException {
        PosixFileAttributes a;
        try {
            a = lstat(parent, name);
        } catch (NoSuchFileException gone) {
            return false;
        }
        if (a.isDirectory()) {
            try (SecureDirectoryStream<Path> dir = openChild(parent, name, relative)) {
                List<Path> names = list(dir, relative, budget);
                if (!names.isEmpty() && depth >= budget.maxDepth) {
                    throw new WalkLimitException(
                            WalkLimitException.Bound.DEPTH, budget.maxDepth, root.resolve(relative));
                }
                for (Path n : names) {
                    deleteEntry(dir, n, relative.resolve(n), depth + 1, budget);
                }
            }
            parent.deleteDirectory(name);
        } else {
            parent.deleteFile(name);
        }
        return true;
    }

    private void copy(
            SecureDirectoryStream<Path> from,
            Path name,
            Path relative,
            SecureDirectoryStream<Path> to,
            ProjectFiles target,
            Path targetRelative,
            int depth,
            Budget budget)
            throws IOException {
        Path targetName = target.name(targetRelative);
        PosixFileAttributes a = lstat(from, name);
        if (a.isRegularFile()) {
            try (SeekableByteChannel in = openRead(from, name, relative);
                    SeekableByteChannel out = to.newByteChannel(
                            targetName,
                            Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW, LinkOption.NOFOLLOW_LINKS),
                            PosixFilePermissions.asFileAttribute(a.permissions()))) {
                ByteBuffer buffer = ByteBuffer.allocate(COPY_BUFFER);
                while (in.read(buffer) >= 0) {
                    buffer.flip();
                    while (buffer.hasRemaining()) {
                        out.write(buffer);
                    }
                    buffer.clear();
                }
            }
            to.getFileAttributeView(targetName, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setTimes(a.lastModifiedTime(), null, null);
        } else if (a.isDirectory()) {
            Files.createDirectory(
                    target.root.resolve(targetRelative),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            try (SecureDirectoryStream<Path> source = openChild(from, name, relative);
                    SecureDirectoryStream<Path> copy = target.openChild(to, targetName, targetRelative)) {
                List<Path> names = list(source, relative, budget);
                if (!names.isEmpty() && depth >= budget.maxDepth) {
                    throw new WalkLimitException(
                            WalkLimitException.Bound.DEPTH, budget.maxDepth, root.resolve(relative));
                }
                for (Path n : names) {
                    copy(source, n, relative.resolve(n), copy, target, targetRelative.resolve(n), depth + 1, budget);
                }
            }
            to.getFileAttributeView(targetName, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setPermissions(a.permissions());
        } else if (a.isSymbolicLink()) {
            Files.createSymbolicLink(target.root.resolve(targetRelative), readLink(from, name, relative));
            if (!target.lstat(to, targetName).isSymbolicLink()) {
                throw changedWhileRead(target.root.resolve(targetRelative));
            }
        } else {
            throw new FileSystemException(
                    root.resolve(relative).toString(),
                    null,
                    "neither a file, a directory nor a link, so it cannot be moved to another file system");
        }
    }

    private Path readLink(SecureDirectoryStream<Path> parent, Path name, Path relative) throws IOException {
        PosixFileAttributes a = lstat(parent, name);
        Path path = root.resolve(relative);
        if (!a.isSymbolicLink()) {
            throw new NotLinkException(path.toString());
        }
        Path target = Files.readSymbolicLink(path);
        Object key;
        try {
            key = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                    .fileKey();
        } catch (IOException e) {
            throw changedWhileRead(path);
        }
        if (!a.fileKey().equals(key)) {
            throw changedWhileRead(path);
        }
        return target;
    }

    private SeekableByteChannel openRead(SecureDirectoryStream<Path> parent, Path name, Path relative)
            throws IOException {
        try {
            return parent.newByteChannel(name, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
        } catch (NoSuchFileException e) {
            throw e;
        } catch (IOException e) {
            if (isLink(parent, name)) {
                throw new LinkInPathException(root.resolve(relative));
            }
            throw e;
        }
    }

    /** The root, opened by its path (it is trusted); its last component must be a directory, not a link. */
    private SecureDirectoryStream<Path> openRoot() throws IOException {
        BasicFileAttributes a = Files.readAttributes(root, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (a.isSymbolicLink()) {
            throw new LinkInPathException(root);
        }
        if (!a.isDirectory()) {
            throw new NotADirectory(root);
        }
        DirectoryStream<Path> stream = Files.newDirectoryStream(root);
        if (!(stream instanceof SecureDirectoryStream<Path> secure)) {
            stream.close();
            throw new IOException("this platform offers no SecureDirectoryStream for " + root
                    + ", so agentjail cannot work below it without following links");
        }
        try {
            Object opened = secure.getFileAttributeView(BasicFileAttributeView.class)
                    .readAttributes()
                    .fileKey();
            if (!Objects.equals(a.fileKey(), opened)) {
                throw changedWhileRead(root);
            }
            return secure;
        } catch (IOException | RuntimeException e) {
            secure.close();
            throw e;
        }
    }

    private SecureDirectoryStream<Path> openDirectory(Path relative) throws IOException {
        SecureDirectoryStream<Path> dir = openRoot();
        if (isSelf(relative)) {
            return dir;
        }
        requireBelow(relative);
        try {
            Path at = SELF;
            for (Path name : relative) {
                at = at.resolve(name);
                SecureDirectoryStream<Path> next = openChild(dir, name, at);
                dir.close();
                dir = next;
            }
            return dir;
        } catch (IOException | RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    private SecureDirectoryStream<Path> openParent(Path relative) throws IOException {
        Path parent = relative.getParent();
        return openDirectory(parent == null ? SELF : parent);
    }

    private SecureDirectoryStream<Path> openChild(SecureDirectoryStream<Path> dir, Path name, Path relative)
            throws IOException {
        PosixFileAttributes a = lstat(dir, name);
        if (a.isSymbolicLink()) {
            throw new LinkInPathException(root.resolve(relative));
        }
        if (!a.isDirectory()) {
            throw new NotADirectory(root.resolve(relative));
        }
        try {
            return dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw e;
        } catch (NotDirectoryException e) {
            throw new NotADirectory(root.resolve(relative));
        } catch (FileSystemException e) {
            // ELOOP: it became a link after the check.
            if (isLink(dir, name)) {
                throw new LinkInPathException(root.resolve(relative));
            }
            throw e;
        }
    }

    private List<Path> list(SecureDirectoryStream<Path> dir, Path relative, Budget budget) throws IOException {
        List<Path> names = new ArrayList<>();
        try {
            for (Path entry : dir) {
                if (++budget.entries > budget.maxEntries) {
                    throw new WalkLimitException(
                            WalkLimitException.Bound.ENTRIES, budget.maxEntries, root.resolve(relative));
                }
                names.add(entry.getFileName());
            }
        } catch (DirectoryIteratorException e) {
            throw e.getCause();
        }
        names.sort(null);
        return names;
    }

    private static PosixFileAttributes lstat(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        return dir.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .readAttributes();
    }

    private static boolean exists(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        try {
            lstat(dir, name);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    private static boolean isLink(SecureDirectoryStream<Path> dir, Path name) {
        try {
            return lstat(dir, name).isSymbolicLink();
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isSelf(Path relative) {
        return relative.toString().isEmpty();
    }

    private void requireBelow(Path relative) {
        JailPaths.relative(relative, "path below " + root);
    }

    private Path name(Path relative) {
        requireBelow(relative);
        return relative.getFileName();
    }

    private static IOException changedWhileRead(Path path) {
        return new FileSystemException(
                path.toString(), null, "changed while it was read (another process is rearranging the tree)");
    }

    /** The bounds of one tree operation, and how much of them it used. */
    private static final class Budget {
        final int maxDepth;
        final int maxEntries;
        int entries;

        Budget(int maxDepth, int maxEntries) {
            if (maxDepth < 1 || maxEntries < 1) {
                throw new IllegalArgumentException(
                        "bounds must be positive: depth " + maxDepth + ", entries " + maxEntries);
            }
            this.maxDepth = maxDepth;
            this.maxEntries = maxEntries;
        }
    }

    /** {@link NotDirectoryException} with a message that says so. */
    private static final class NotADirectory extends NotDirectoryException {
        private static final long serialVersionUID = 1L;

        NotADirectory(Path path) {
            super(path.toString());
        }

        @Override
        public String getMessage() {
            return getFile() + " is not a directory";
        }
    }
}
