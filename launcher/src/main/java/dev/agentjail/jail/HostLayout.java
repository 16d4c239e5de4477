package dev.agentjail.jail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The read-only system part of the jail: which host directories are bound, which root entries are symlinks
 * (merged /usr), and which /etc entries are visible.
 *
 * @param systemDirs directories bound read-only onto themselves, if present ({@code --ro-bind-try})
 * @param rootLinks root-level symlinks recreated inside the jail, such as {@code /bin -> usr/bin}
 * @param etcEntries /etc files and directories bound read-only onto themselves, if present
 * @param procCovers what is laid over the jail's own /proc: its kernel interfaces (everything but the processes)
 */
public record HostLayout(
        List<Path> systemDirs, List<RootLink> rootLinks, List<Path> etcEntries, List<ProcCover> procCovers) {
    /** Candidates for the system part: /usr plus the classic top-level program and library directories. */
    public static final List<Path> SYSTEM_CANDIDATES =
            paths("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32");

    /**
     * The minimum of /etc: name service and loader configuration, CA certificates, Debian's alternatives
     * (targets of /usr/bin symlinks), the timezone and the OS release. passwd, group and hosts are synthetic (see
     * {@link SessionFiles}); resolv.conf is left out because the jail has no DNS. Only the public parts of
     * /etc/ssl: /etc/ssl/private would be readable to an agent mapped onto host root.
     */
    public static final List<Path> ETC_DEFAULTS = paths(
            "/etc/nsswitch.conf",
            "/etc/ld.so.cache",
            "/etc/ld.so.conf",
            "/etc/ld.so.conf.d",
            "/etc/alternatives",
            "/etc/ssl/certs",
            "/etc/ssl/openssl.cnf",
            "/etc/ca-certificates",
            "/etc/pki/tls/certs",
            "/etc/pki/ca-trust",
            "/etc/crypto-policies",
            "/etc/localtime",
            "/etc/os-release");

    /** A symlink at the jail's root, recreated with {@code --symlink target link}. */
    public record RootLink(Path link, String target) {
        public RootLink {
            JailPaths.absolute(link, "root link");
            if (target == null || target.isEmpty()) {
                throw new IllegalArgumentException("root link " + link + " has no target");
            }
        }
    }

    /**
     * A top-level /proc entry that is not a process, covered in the jail: a directory (sys, irq, bus, fs, driver, ...)
     * or a file with a write bit (sysrq-trigger, mtrr, ...) is bound read-only over itself; a file only its owner
     * may read (kmsg, slabinfo, kpageflags, ...) is hidden behind the empty file. A jail started by root for a root
     * project runs as kernel uid 0, to which the kernel grants these by their mode alone.
     */
    public record ProcCover(Path path, boolean hidden) {
        public ProcCover {
            JailPaths.absolute(path, "/proc entry");
            if (!path.startsWith(PROC) || path.getNameCount() != 2) {
                throw new IllegalArgumentException("not a top-level /proc entry: " + path);
            }
        }
    }

    private static final Path PROC = Path.of("/proc");

    public HostLayout {
        systemDirs.forEach(p -> JailPaths.absolute(p, "system directory"));
        etcEntries.forEach(p -> JailPaths.absolute(p, "/etc entry"));
        systemDirs = List.copyOf(systemDirs);
        rootLinks = List.copyOf(rootLinks);
        etcEntries = List.copyOf(etcEntries);
        procCovers = List.copyOf(procCovers);
    }

    /** A layout without /proc covers (tests that assert the rest of the argv). */
    public HostLayout(List<Path> systemDirs, List<RootLink> rootLinks, List<Path> etcEntries) {
        this(systemDirs, rootLinks, etcEntries, List.of());
    }

    /**
     * Looks at the host once: a candidate that is a symlink on the host (merged /usr) becomes the same symlink
     * in the jail, because binding it would follow the link and duplicate /usr/bin at /bin.
     */
    public static HostLayout probe() {
        List<Path> dirs = new ArrayList<>();
        List<RootLink> links = new ArrayList<>();
        for (Path candidate : SYSTEM_CANDIDATES) {
            if (Files.isSymbolicLink(candidate)) {
                try {
                    links.add(new RootLink(
                            candidate, Files.readSymbolicLink(candidate).toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read the symlink " + candidate, e);
                }
            } else if (Files.isDirectory(candidate)) {
                dirs.add(candidate);
            }
        }
        return new HostLayout(dirs, links, ETC_DEFAULTS, procCovers(PROC));
    }

    /**
     * The covers for the kernel interfaces in {@code proc} (the host's /proc: a new procfs of the same kernel has the
     * same top-level entries), decided from each entry's type and mode, not from a fixed list of names. bwrap's own
     * covers are not enough: it skips an entry whose mode has no write bit for the mapped user, which is what kernel
     * uid 0 can write anyway.
     */
    static List<ProcCover> procCovers(Path proc) {
        List<ProcCover> covers = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(proc)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                BasicFileAttributes attrs;
                int mode;
                try {
                    attrs = Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    mode = (Integer) Files.getAttribute(entry, "unix:mode", LinkOption.NOFOLLOW_LINKS);
                } catch (IOException gone) {
                    continue;
                }
                Path inJail = PROC.resolve(name);
                if (attrs.isDirectory() || (attrs.isRegularFile() && (mode & 0222) != 0)) {
                    covers.add(new ProcCover(inJail, false));
                } else if (attrs.isRegularFile() && (mode & 0004) == 0) {
                    covers.add(new ProcCover(inJail, true));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + proc, e);
        }
        covers.sort(Comparator.comparing(ProcCover::path));
        return covers;
    }

    private static List<Path> paths(String... names) {
        return Arrays.stream(names).map(Path::of).toList();
    }
}
