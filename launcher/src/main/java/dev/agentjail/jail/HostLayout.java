package dev.agentjail.jail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The read-only system part of the jail: which host directories are bound, which root entries are symlinks
 * (merged /usr), and which /etc entries are visible.
 *
 * @param systemDirs directories bound read-only onto themselves, if present ({@code --ro-bind-try})
 * @param rootLinks root-level symlinks recreated inside the jail, such as {@code /bin -> usr/bin}
 * @param etcEntries /etc files and directories bound read-only onto themselves, if present
 */
public record HostLayout(List<Path> systemDirs, List<RootLink> rootLinks, List<Path> etcEntries) {
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

    public HostLayout {
        systemDirs.forEach(p -> JailPaths.absolute(p, "system directory"));
        etcEntries.forEach(p -> JailPaths.absolute(p, "/etc entry"));
        systemDirs = List.copyOf(systemDirs);
        rootLinks = List.copyOf(rootLinks);
        etcEntries = List.copyOf(etcEntries);
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
        return new HostLayout(dirs, links, ETC_DEFAULTS);
    }

    private static List<Path> paths(String... names) {
        return Arrays.stream(names).map(Path::of).toList();
    }
}
