package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * The host paths behind the policy's binds, resolved before bwrap sees them.
 *
 * <p>bwrap follows symbolic links in a bind's source. A jailed agent can make links wherever it may write (the
 * project, a writable config directory such as {@code ~/.claude}), and a link it leaves at a path that a later
 * session binds would show that session whatever the link names: {@code ~/.claude/settings.json -> ..} turns a
 * read-only bind of one file into the whole home directory. So each bind is resolved here, component by component,
 * and a symbolic link found in a directory the user can write counts as untrusted (an agent may have made it; links
 * in directories only root can change, such as {@code /home -> var/home}, are the system's). A bind that leads
 * through an untrusted link is kept only when where it leads lies inside a path the policy names itself (by a path
 * with no untrusted link in it), the project, or the read-only system directories, with the same or wider access;
 * anything else stops the session before it starts ({@link UnnamedLinkException}).
 *
 * <p>bwrap is then given the resolved real path, and a bind whose source does not exist is dropped (bwrap's {@code
 * -try} would skip it anyway), so a link created after this check is not followed either.
 */
public final class BindSources {
    /** Enough for any honest chain of links; more is a loop. */
    private static final int MAX_LINKS = 40;

    /** The policy's binds with their sources resolved; binds whose source does not exist are left out. */
    public record Resolved(List<HomeEntry> homeEntries, List<Bind> extraBinds) {}

    /** A symbolic link met on the way, as found ({@code link}) and as written ({@code target}). */
    record Link(Path link, Path target) {}

    /** Where a path leads: its real path, and the untrusted links followed to get there. */
    record Walk(Path real, List<Link> untrusted) {}

    private record Named(Path path, Access access) {}

    private BindSources() {}

    /**
     * Resolves the home entries (below {@code home}) and the extra binds (absolute; each bound onto its own path).
     *
     * @param home the user's home directory on the host, where the jail's home entries come from
     * @param project the project directory (a real path), bound read-write
     * @param systemDirs the system directories the jail shows read-only
     * @throws UnnamedLinkException when a bind leads through an untrusted link to a path the policy does not name
     * @throws IOException when a path cannot be examined, or a bind that is not optional does not exist
     */
    public static Resolved resolve(
            Path home, Path project, List<Path> systemDirs, List<HomeEntry> homeEntries, List<Bind> extraBinds)
            throws IOException, UnnamedLinkException {
        // A home that does not exist (HOME=/nonexistent) has no entries to show.
        Optional<Path> realHome = Files.isDirectory(home) ? Optional.of(home.toRealPath()) : Optional.empty();
        List<Optional<Walk>> entryWalks = new ArrayList<>();
        for (HomeEntry entry : homeEntries) {
            entryWalks.add(realHome.isPresent() ? walk(realHome.get(), entry.relative()) : Optional.empty());
        }
        List<Optional<Walk>> bindWalks = new ArrayList<>();
        for (Bind bind : extraBinds) {
            bindWalks.add(walk(Path.of("/"), Path.of("/").relativize(bind.source())));
        }
        List<Named> named = new ArrayList<>();
        named.add(new Named(project.toRealPath(), Access.READ_WRITE));
        for (Path dir : systemDirs) {
            if (Files.exists(dir)) {
                named.add(new Named(dir.toRealPath(), Access.READ_ONLY));
            }
        }
        for (int i = 0; i < homeEntries.size(); i++) {
            addNamed(named, entryWalks.get(i), homeEntries.get(i).access());
        }
        for (int i = 0; i < extraBinds.size(); i++) {
            addNamed(named, bindWalks.get(i), extraBinds.get(i).access());
        }

        List<HomeEntry> entries = new ArrayList<>();
        for (int i = 0; i < homeEntries.size(); i++) {
            HomeEntry entry = homeEntries.get(i);
            Optional<Walk> walk = entryWalks.get(i);
            if (walk.isEmpty()) {
                continue;
            }
            Path configured = home.resolve(entry.relative());
            check(named, walk.get(), "~/" + entry.relative(), entry.access());
            Path real = walk.get().real();
            entries.add(new HomeEntry(
                    entry.relative(), entry.access(), real.equals(configured) ? Optional.empty() : Optional.of(real)));
        }
        List<Bind> binds = new ArrayList<>();
        for (int i = 0; i < extraBinds.size(); i++) {
            Bind bind = extraBinds.get(i);
            Optional<Walk> walk = bindWalks.get(i);
            if (walk.isEmpty()) {
                if (!bind.optional()) {
                    throw new NoSuchFileException(
                            bind.source().toString(), null, "the policy binds it, and it does not exist");
                }
                continue;
            }
            check(named, walk.get(), bind.source().toString(), bind.access());
            binds.add(new Bind(walk.get().real(), bind.target(), bind.access(), bind.optional()));
        }
        return new Resolved(List.copyOf(entries), List.copyOf(binds));
    }

    private static void addNamed(List<Named> named, Optional<Walk> walk, Access access) {
        if (walk.isPresent() && walk.get().untrusted().isEmpty()) {
            named.add(new Named(walk.get().real(), access));
        }
    }

    private static void check(List<Named> named, Walk walk, String configured, Access access)
            throws UnnamedLinkException {
        if (walk.untrusted().isEmpty()) {
            return;
        }
        Path real = walk.real();
        boolean inside = named.stream()
                .anyMatch(n ->
                        real.startsWith(n.path()) && (access == Access.READ_ONLY || n.access() == Access.READ_WRITE));
        if (inside) {
            return;
        }
        Link link = walk.untrusted().get(0);
        String key = access == Access.READ_ONLY ? "filesystem.read" : "filesystem.write";
        throw new UnnamedLinkException(key + " " + configured + " leads through the symbolic link " + link.link()
                + " -> " + link.target() + " to " + real + ", which the policy does not name"
                + (access == Access.READ_WRITE ? " writable" : "")
                + ". A jailed agent can leave such links wherever it may write, so agentjail follows a link only to a"
                + " path the policy names. If you made the link, add " + real + " to " + key
                + "; if you did not, remove it (an agent may have)");
    }

    /**
     * Follows {@code relative} from {@code start} (a real directory) the way the kernel would, noting each symbolic
     * link found in a directory the user can write. Empty when the path does not exist (or a link in it dangles).
     */
    static Optional<Walk> walk(Path start, Path relative) throws IOException {
        Deque<Path> todo = new ArrayDeque<>();
        relative.forEach(todo::add);
        Path current = start;
        List<Link> untrusted = new ArrayList<>();
        int links = 0;
        while (!todo.isEmpty()) {
            String name = todo.pop().toString();
            if (name.isEmpty() || name.equals(".")) {
                continue;
            }
            if (name.equals("..")) {
                current = current.getParent() == null ? current : current.getParent();
                continue;
            }
            Path next = current.resolve(name);
            BasicFileAttributes attributes;
            try {
                attributes = Files.readAttributes(next, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException | NotDirectoryException e) {
                return Optional.empty();
            }
            if (!attributes.isSymbolicLink()) {
                if (!todo.isEmpty() && !attributes.isDirectory()) {
                    return Optional.empty();
                }
                current = next;
                continue;
            }
            if (++links > MAX_LINKS) {
                throw new IOException(next + ": too many levels of symbolic links");
            }
            Path target = Files.readSymbolicLink(next);
            if (Files.isWritable(current)) {
                untrusted.add(new Link(next, target));
            }
            List<Path> parts = new ArrayList<>();
            target.forEach(parts::add);
            for (int i = parts.size() - 1; i >= 0; i--) {
                todo.push(parts.get(i));
            }
            if (target.isAbsolute()) {
                current = target.getRoot();
            }
        }
        return Optional.of(new Walk(current, List.copyOf(untrusted)));
    }
}
