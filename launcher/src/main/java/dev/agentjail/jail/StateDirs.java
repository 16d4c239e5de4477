package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.List;

/**
 * Creates a preset's missing config directories in the real home (mode 0700, owned by the jail's user), so that what
 * the agent keeps there is bound in and outlives the session instead of vanishing with the jail's throwaway home.
 *
 * <p>Each component is opened relative to its parent's descriptor without following links ({@link
 * SecureDirectoryStream}); one that is a symbolic link, not a directory, or owned by another user stops the creation
 * (an {@link IOException} that names it). A directory is made by path (the JDK has no mkdirat) and then opened through
 * its parent's descriptor, so one that a swap sent elsewhere is refused, having created at most an empty directory
 * there; its mode and owner are set through its own descriptor.
 */
public final class StateDirs {
    private StateDirs() {}

    /**
     * Creates each of {@code dirs} (relative to {@code home}) that is missing, with its missing parents.
     *
     * @return the directories created, relative to {@code home}
     */
    public static List<Path> create(Path home, List<Path> dirs, int uid, int gid) throws IOException {
        UserPrincipalLookupService lookup = home.getFileSystem().getUserPrincipalLookupService();
        UserPrincipal user = lookup.lookupPrincipalByName(Integer.toString(uid));
        GroupPrincipal group = lookup.lookupPrincipalByGroupName(Integer.toString(gid));
        List<Path> created = new ArrayList<>();
        for (Path dir : dirs) {
            JailPaths.relative(dir, "state directory");
            create(home, dir, user, group, created);
        }
        return List.copyOf(created);
    }

    private static void create(Path home, Path dir, UserPrincipal user, GroupPrincipal group, List<Path> created)
            throws IOException {
        if (Files.isSymbolicLink(home)) {
            throw new IOException("the home directory " + home + " is a symbolic link");
        }
        SecureDirectoryStream<Path> current = open(Files.newDirectoryStream(home), home);
        try {
            Path at = Path.of("");
            for (int i = 0; i < dir.getNameCount(); i++) {
                Path name = dir.getName(i);
                at = at.resolve(name);
                boolean last = i == dir.getNameCount() - 1;
                PosixFileAttributes attributes;
                try {
                    attributes = current.getFileAttributeView(
                                    name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                            .readAttributes();
                } catch (NoSuchFileException missing) {
                    attributes = null;
                }
                if (attributes != null && attributes.isSymbolicLink()) {
                    throw refused(home, dir, at, "is a symbolic link");
                }
                if (attributes != null && !attributes.isDirectory()) {
                    if (last) {
                        return; // A file by that name: nothing to create.
                    }
                    throw refused(home, dir, at, "is not a directory");
                }
                if (attributes == null) {
                    try {
                        Files.createDirectory(
                                home.resolve(at),
                                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                    } catch (FileAlreadyExistsException raced) {
                        // Made meanwhile: checked below like any existing one.
                    }
                }
                SecureDirectoryStream<Path> next =
                        open(current.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS), home.resolve(at));
                current.close();
                current = next;
                PosixFileAttributeView self = current.getFileAttributeView(PosixFileAttributeView.class);
                if (attributes == null) {
                    self.setPermissions(PosixFilePermissions.fromString("rwx------"));
                    if (!self.readAttributes().owner().equals(user)) {
                        self.setOwner(user);
                    }
                    self.setGroup(group);
                    created.add(at);
                } else if (!self.readAttributes().owner().equals(user)) {
                    throw refused(
                            home,
                            dir,
                            at,
                            "belongs to " + self.readAttributes().owner().getName());
                }
            }
        } finally {
            current.close();
        }
    }

    private static SecureDirectoryStream<Path> open(DirectoryStream<Path> stream, Path path) throws IOException {
        if (stream instanceof SecureDirectoryStream<Path> secure) {
            return secure;
        }
        stream.close();
        throw new IOException("cannot open " + path + " without following links on this file system");
    }

    /**
     * Creates the file {@code relative} (to {@code home}) with {@code content}, mode 0600, owned by the jail's user,
     * when it is missing and its directory exists; the directories on the way are opened without following links (a
     * link or another user's directory refuses, as for {@link #create}) and the file is made through its directory's
     * descriptor, never through a link. Returns whether it made the file.
     */
    public static boolean createFile(Path home, Path relative, String content, int uid, int gid) throws IOException {
        JailPaths.relative(relative, "protected file");
        if (Files.isSymbolicLink(home)) {
            throw new IOException("the home directory " + home + " is a symbolic link");
        }
        UserPrincipalLookupService lookup = home.getFileSystem().getUserPrincipalLookupService();
        UserPrincipal user = lookup.lookupPrincipalByName(Integer.toString(uid));
        GroupPrincipal group = lookup.lookupPrincipalByGroupName(Integer.toString(gid));
        SecureDirectoryStream<Path> current = open(Files.newDirectoryStream(home), home);
        try {
            Path parent = relative.getParent() == null ? Path.of("") : relative.getParent();
            for (int i = 0; i < parent.getNameCount() && !parent.toString().isEmpty(); i++) {
                Path name = parent.getName(i);
                PosixFileAttributes attributes;
                try {
                    attributes = current.getFileAttributeView(
                                    name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                            .readAttributes();
                } catch (NoSuchFileException missing) {
                    return false; // No directory to protect a file in.
                }
                if (!attributes.isDirectory() || attributes.isSymbolicLink()) {
                    return false;
                }
                SecureDirectoryStream<Path> next =
                        open(current.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS), home.resolve(parent));
                current.close();
                current = next;
            }
            Path name = relative.getFileName();
            try (var channel = current.newByteChannel(
                    name,
                    java.util.Set.of(
                            java.nio.file.StandardOpenOption.CREATE_NEW,
                            java.nio.file.StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                channel.write(java.nio.ByteBuffer.wrap(content.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            } catch (FileAlreadyExistsException exists) {
                return false;
            }
            PosixFileAttributeView view =
                    current.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
            if (!view.readAttributes().owner().equals(user)) {
                view.setOwner(user);
            }
            if (!view.readAttributes().group().equals(group)) {
                view.setGroup(group);
            }
            return true;
        } finally {
            current.close();
        }
    }

    private static IOException refused(Path home, Path dir, Path at, String why) {
        return new IOException("cannot create ~/" + dir + " for the agent's state: " + home.resolve(at) + " " + why
                + "; create ~/" + dir + " yourself (mode 0700), or the agent's state is lost with the jail's home");
    }
}
