package dev.agentjail.policy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Walks a path from {@code /} one name at a time, following symbolic links, and refuses every entry on the way that
 * anyone but root owns or can write: what the machine policy's files are trusted by.
 *
 * <p>Checking by name has no race that matters: an entry is looked at only after the directory holding it passed, and
 * only root can rename, replace or add an entry in a directory that only root can write, so nobody else can swap one
 * between its check and its use. A sticky directory that everyone can write (such as {@code /tmp}) is refused as well:
 * the sticky bit stops others from removing what they do not own, not from adding names of their own.
 */
final class RootOnlyPaths {
    /** The checks agentjail makes: every entry from {@code /} on, owned by uid 0. */
    static final RootOnlyPaths SYSTEM = new RootOnlyPaths(0, Optional.empty());

    /** Why agentjail refuses an entry that is not root's alone; the end of each such message. */
    static final String WHY = "agentjail reads the machine policy only from root-owned files that only root can write";

    /** As many symbolic links as Linux follows in one lookup. */
    static final int MAX_LINKS = 40;

    private static final int TYPE = 0170000;
    private static final int DIRECTORY = 0040000;
    private static final int REGULAR = 0100000;
    private static final int LINK = 0120000;
    private static final int GROUP_WRITE = 0020;
    private static final int OTHER_WRITE = 0002;

    private final int owner;
    private final Optional<Path> uncheckedUpTo;

    /**
     * Entries must belong to {@code owner}; {@code uncheckedUpTo} and its ancestors are not checked. Only tests pass
     * anything but {@link #SYSTEM}'s values: they cannot make root's files, and their temporary directory is in /tmp.
     */
    RootOnlyPaths(int owner, Optional<Path> uncheckedUpTo) {
        this.owner = owner;
        this.uncheckedUpTo = Objects.requireNonNull(uncheckedUpTo, "uncheckedUpTo");
    }

    /**
     * What lstat(2) tells about one entry: enough to check it, and to recognise it unchanged after reading it. No
     * names: looking up a user or group can ask a directory service, and only a refusal needs them.
     */
    record Attributes(int mode, int uid, int gid, Object fileKey, long size, FileTime modified) {
        static Attributes of(Path path) throws IOException {
            Map<String, Object> a = Files.readAttributes(
                    path, "unix:mode,uid,gid,fileKey,size,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
            return new Attributes(
                    (Integer) a.get("mode"),
                    (Integer) a.get("uid"),
                    (Integer) a.get("gid"),
                    a.get("fileKey"),
                    (Long) a.get("size"),
                    (FileTime) a.get("lastModifiedTime"));
        }

        boolean isDirectory() {
            return (mode & TYPE) == DIRECTORY;
        }

        boolean isRegularFile() {
            return (mode & TYPE) == REGULAR;
        }

        boolean isLink() {
            return (mode & TYPE) == LINK;
        }

        String octalMode() {
            return String.format("%04o", mode & 07777);
        }
    }

    /** Where a walk ended: a path without links, and its attributes as they were checked. */
    record Entry(Path path, Attributes attributes) {}

    /** One name still to walk; {@code fromLink} when a link's target brought it. */
    private record Name(String value, boolean fromLink) {}

    /**
     * Resolves the absolute {@code path}, checking every entry on the way: each directory, each link and the directory
     * it is in, each link's target, and the entry the walk ends at. Empty when the last name of {@code path} does not
     * exist (a link that leads nowhere is refused). {@code subject} names the machine-policy file in messages.
     */
    Optional<Entry> resolve(Path path, String subject) throws MachinePolicyException {
        if (!path.isAbsolute()) {
            throw new IllegalArgumentException("not an absolute path: " + path);
        }
        Deque<Name> names = new ArrayDeque<>();
        push(names, path, false);
        Path root = path.getRoot();
        Attributes rootAttributes = lookUp(root, subject);
        check(root, rootAttributes, subject);
        Path current = root;
        Attributes attributes = rootAttributes;
        int links = 0;
        while (!names.isEmpty()) {
            Name name = names.pop();
            if (name.value().equals(".")) {
                continue;
            }
            if (name.value().equals("..")) {
                // current has no links in it, so its parent is what the kernel would reach.
                current = current.getParent() == null ? current : current.getParent();
                attributes = lookUp(current, subject);
                check(current, attributes, subject);
                continue;
            }
            Path next = current.resolve(name.value());
            Attributes found;
            try {
                found = Attributes.of(next);
            } catch (NoSuchFileException e) {
                if (names.isEmpty() && !name.fromLink()) {
                    return Optional.empty();
                }
                throw problem(subject, "leads to " + next + ", which does not exist");
            } catch (IOException e) {
                throw unreadable(subject, next, e);
            }
            check(next, found, subject);
            if (found.isLink()) {
                if (++links > MAX_LINKS) {
                    throw problem(subject, "more than " + MAX_LINKS + " symbolic links on the way");
                }
                Path target;
                try {
                    target = Files.readSymbolicLink(next);
                } catch (IOException e) {
                    throw unreadable(subject, next, e);
                }
                push(names, target, true);
                if (target.isAbsolute()) {
                    current = root;
                    attributes = rootAttributes;
                }
                continue;
            }
            if (!names.isEmpty() && !found.isDirectory()) {
                throw problem(subject, next + " is not a directory");
            }
            current = next;
            attributes = found;
        }
        return Optional.of(new Entry(current, attributes));
    }

    private static void push(Deque<Name> names, Path path, boolean fromLink) {
        for (int i = path.getNameCount() - 1; i >= 0; i--) {
            names.push(new Name(path.getName(i).toString(), fromLink));
        }
    }

    private static Attributes lookUp(Path path, String subject) throws MachinePolicyException {
        try {
            return Attributes.of(path);
        } catch (IOException e) {
            throw unreadable(subject, path, e);
        }
    }

    /** Refuses an entry someone other than the owner (root) owns or can write; a link's own mode means nothing. */
    private void check(Path path, Attributes a, String subject) throws MachinePolicyException {
        if (uncheckedUpTo.isPresent() && uncheckedUpTo.get().startsWith(path)) {
            return;
        }
        if (a.uid() != owner) {
            Optional<String> name = name(path, "owner");
            String who =
                    name.map(n -> Quoting.quote(n) + " (uid " + a.uid() + ")").orElse("uid " + a.uid());
            throw unsafe(subject, path, "owned by " + who + ", not by root");
        }
        if (a.isLink()) {
            return;
        }
        if ((a.mode() & OTHER_WRITE) != 0) {
            throw unsafe(subject, path, "writable by every user (mode " + a.octalMode() + ")");
        }
        if ((a.mode() & GROUP_WRITE) != 0) {
            String group = name(path, "group").map(Quoting::quote).orElse("gid " + a.gid());
            throw unsafe(subject, path, "writable by group " + group + " (mode " + a.octalMode() + ")");
        }
    }

    /** The name of the entry's owner or group for a message; empty when it has none (only a number). */
    private static Optional<String> name(Path path, String attribute) {
        try {
            Object principal = Files.getAttribute(path, "posix:" + attribute, LinkOption.NOFOLLOW_LINKS);
            String name = principal instanceof UserPrincipal p ? p.getName() : String.valueOf(principal);
            return name.chars().allMatch(Character::isDigit) ? Optional.empty() : Optional.of(name);
        } catch (IOException e) {
            return Optional.empty(); // The refusal stands; it only lacks the name.
        }
    }

    /** {@code SUBJECT: problem; WHY}, or {@code SUBJECT: PATH is problem; WHY} when the entry is another one. */
    static MachinePolicyException unsafe(String subject, Path path, String problem) {
        String what = path.toString().equals(subject) ? problem : path + " is " + problem;
        return new MachinePolicyException(subject, what + "; " + WHY);
    }

    static MachinePolicyException problem(String subject, String problem) {
        return new MachinePolicyException(subject, problem);
    }

    /** An entry that cannot be looked at: never skipped, since what it holds might be the policy. */
    static MachinePolicyException unreadable(String subject, Path path, IOException e) {
        String why = Quoting.shorten(IoErrors.describe(path, e));
        String what = path.toString().equals(subject) ? "cannot read: " : "cannot read " + path + ": ";
        return new MachinePolicyException(subject, what + why);
    }
}
