package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The host user a jail started by root runs as: the owner of the project, so that the agent is never kernel uid 0
 * where an ordinary identity can do the work, and what it writes belongs to that user.
 *
 * @param uid the host uid the jail runs as (never 0)
 * @param gid its primary group
 * @param name its login name, shown inside the jail
 * @param home its home directory: the jail's home, and where the policy's {@code ~} paths are read from
 */
public record HostUser(int uid, int gid, String name, Path home) {
    public HostUser {
        if (uid <= 0 || gid < 0) {
            throw new IllegalArgumentException("a host user for the jail needs a non-zero uid: " + uid + "/" + gid);
        }
        JailPaths.absolute(home, "host user's home");
    }

    /**
     * For a launcher running as {@code launcherUid}: empty unless it is root and {@code project} belongs to another
     * user. A root-owned project keeps the root launch, hardened instead (see docs/jail.md, "Running as root"). An owner
     * without a passwd entry runs the jail with the project's group and a home of its own that does not exist on the
     * host ({@code notes} hears so); an owner who cannot reach the project (a parent not searchable by them) is
     * refused with an IOException that says which directory and what to do, since neither they nor root's
     * unprivileged mapping could work in it.
     */
    public static Optional<HostUser> forProject(int launcherUid, Path project, Path passwd, Consumer<String> notes)
            throws IOException {
        if (launcherUid != 0) {
            return Optional.empty();
        }
        int owner = (Integer) Files.getAttribute(project, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (owner == 0) {
            return Optional.empty();
        }
        Optional<HostUser> user = lookup(owner, passwd);
        if (user.isEmpty()) {
            int group = (Integer) Files.getAttribute(project, "unix:gid", LinkOption.NOFOLLOW_LINKS);
            user = Optional.of(new HostUser(owner, group, "agent", Path.of("/home/agentjail-uid-" + owner)));
            notes.accept("the project " + project + " belongs to uid " + owner + ", which has no entry in " + passwd
                    + "; the jail runs as that uid with an empty home of its own");
        }
        Optional<Path> blocked = unreachable(project, user.get());
        if (blocked.isPresent()) {
            throw new IOException("the project " + project + " belongs to uid " + owner + ", who cannot reach it ("
                    + blocked.get() + " is not searchable for them), and the jail runs as a project's owner when root"
                    + " starts it; move the project, let its owner reach it, or give it to root (chown)");
        }
        return user;
    }

    /** The passwd entry of {@code uid}, if {@code passwd} has one with a usable home path. */
    static Optional<HostUser> lookup(int uid, Path passwd) throws IOException {
        if (!Files.isReadable(passwd)) {
            return Optional.empty();
        }
        for (String line : Files.readAllLines(passwd)) {
            String[] f = line.split(":", -1);
            if (f.length < 7 || !f[2].equals(Integer.toString(uid))) {
                continue;
            }
            try {
                Path home = Path.of(f[5].isEmpty() ? "/" : f[5]).normalize();
                if (!home.isAbsolute()) {
                    continue;
                }
                return Optional.of(new HostUser(uid, Integer.parseInt(f[3]), f[0], home));
            } catch (RuntimeException malformed) {
                // A line we cannot read names no one: keep looking.
            }
        }
        return Optional.empty();
    }

    /** The first directory on the way to {@code project} (itself included) that {@code user} may not search. */
    private static Optional<Path> unreachable(Path project, HostUser user) throws IOException {
        Path dir = project;
        List<Path> chain = new ArrayList<>();
        while (dir != null) {
            chain.add(0, dir);
            dir = dir.getParent();
        }
        for (Path p : chain) {
            int owner = (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            int group = (Integer) Files.getAttribute(p, "unix:gid", LinkOption.NOFOLLOW_LINKS);
            int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            int bit = owner == user.uid() ? 0100 : group == user.gid() ? 010 : 01;
            if ((mode & bit) == 0) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
