package dev.agentjail.jail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * Extracts the agentjail-init binary shipped inside the jar into a per-user cache directory, under a name derived
 * from its content (CRC-32C and length), and hands out its path only after checking that the file on disk is exactly
 * that content, byte for byte.
 */
public final class InitBinary {
    static final String RESOURCE_DIR = "/dev/agentjail/jail/native/";

    private static final Set<PosixFilePermission> EXECUTABLE = PosixFilePermissions.fromString("rwxr-xr-x");
    private static final Set<PosixFilePermission> PRIVATE_DIR = PosixFilePermissions.fromString("rwx------");
    /** How old another build's binary must be before a newly written one replaces it in the cache. */
    static final Duration STALE_AFTER = Duration.ofDays(1);

    private InitBinary() {}

    /** The cache directory: {@code $XDG_CACHE_HOME/agentjail}, else {@code ~/.cache/agentjail}. */
    public static Path defaultCacheDir(Map<String, String> env, Path userHome) {
        String xdg = env.get("XDG_CACHE_HOME");
        // The XDG spec says to ignore a relative value.
        Path base =
                xdg != null && !xdg.isEmpty() && Path.of(xdg).isAbsolute() ? Path.of(xdg) : userHome.resolve(".cache");
        return base.resolve("agentjail");
    }

    /** The resource name for this JVM's architecture, such as {@code agentjail-init-linux-x86_64}. */
    public static String resourceName(String osArch) {
        String arch = switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default ->
                throw new IllegalStateException("agentjail-init is built for x86_64 and aarch64 only, not " + osArch);
        };
        return "agentjail-init-linux-" + arch;
    }

    /** Extracts (or reuses) the binary for this JVM's architecture in {@code cacheDir} and returns its path. */
    public static Path extract(Path cacheDir) throws IOException {
        String name = resourceName(System.getProperty("os.arch"));
        byte[] content;
        try (InputStream in = InitBinary.class.getResourceAsStream(RESOURCE_DIR + name)) {
            if (in == null) {
                throw new IOException("resource " + RESOURCE_DIR + name + " is missing from the agentjail jar");
            }
            content = in.readAllBytes();
        }
        return install(cacheDir, name, content);
    }

    /**
     * Copies the extracted binary into {@code sessionDir} (root's, searchable by the jail's user) as {@code
     * agentjail-init}, mode 0555: a root launch whose jail runs as another user binds it from there, because bwrap
     * then runs as that user and cannot search root's cache.
     */
    public static Path copyInto(Path extracted, Path sessionDir) throws IOException {
        Path copy = sessionDir.resolve("agentjail-init");
        Files.copy(extracted, copy, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("r-xr-xr-x"));
        return copy;
    }

    /** Puts {@code content} at {@code cacheDir/<name>-<id>} unless an identical, executable file is there. */
    static Path install(Path cacheDir, String name, byte[] content) throws IOException {
        Path dir = privateDirectory(cacheDir);
        Path target = dir.resolve(name + "-" + id(content));
        if (isIntact(target, content)) {
            return target;
        }
        // Write beside the target and rename over it: a reader never sees a half-written binary.
        Path temp = Files.createTempFile(dir, name + "-", ".tmp");
        try {
            Files.write(temp, content);
            Files.setPosixFilePermissions(temp, EXECUTABLE);
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("cannot rename atomically in " + dir, e);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        if (!isIntact(target, content)) {
            throw new IOException(
                    "agentjail-init at " + target + " does not match the shipped binary after writing it");
        }
        removeStale(dir, name, target, Instant.now().minus(STALE_AFTER));
        return target;
    }

    /**
     * Removes the binaries earlier builds extracted ({@code name-<id>} files other than {@code current}) that were
     * written before {@code writtenBefore}: done when a new build writes its own, so upgrades do not pile them up. A
     * binary written since is left alone: another installed version may be about to start a jail with it.
     */
    static void removeStale(Path dir, String name, Path current, Instant writtenBefore) {
        Pattern own = Pattern.compile(Pattern.quote(name) + "-[0-9a-f]{16}");
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (!entry.equals(current)
                        && own.matcher(entry.getFileName().toString()).matches()
                        && Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS)
                        && Files.getLastModifiedTime(entry, LinkOption.NOFOLLOW_LINKS)
                                .toInstant()
                                .isBefore(writtenBefore)) {
                    Files.deleteIfExists(entry);
                }
            }
        } catch (IOException e) {
            // Only tidying: a binary left behind costs disk space, nothing else.
        }
    }

    /**
     * Creates the cache directory (0700) or checks an existing one: a directory others can write to would let them
     * swap the binary between our check and bwrap's exec.
     */
    private static Path privateDirectory(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Files.createDirectories(dir.getParent());
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PRIVATE_DIR));
            } catch (FileAlreadyExistsException raced) {
                // Another launcher created it first; the checks below apply to it the same way.
            }
        }
        PosixFileAttributes attributes = Files.getFileAttributeView(
                        dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .readAttributes();
        Set<PosixFilePermission> perms = attributes.permissions();
        if (!attributes.isDirectory()
                || perms.contains(PosixFilePermission.GROUP_WRITE)
                || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IOException(
                    "refusing to use " + dir + ": it must be a real directory that only its owner can write");
        }
        int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int self = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (owner != self) {
            throw new IOException("refusing to use " + dir + ": it belongs to uid " + owner + ", not to uid " + self);
        }
        return dir;
    }

    private static boolean isIntact(Path file, byte[] content) throws IOException {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        if (!Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS).equals(EXECUTABLE)) {
            return false;
        }
        // Compared byte for byte, not by digest: stronger, and a cold JVM hashes slowly (this runs at every start).
        return Files.size(file) == content.length && Arrays.equals(Files.readAllBytes(file), content);
    }

    /**
     * Sixteen hex digits that differ between builds of the binary: its CRC-32C and its length. The name only keeps
     * builds apart; the check that matters is {@link #isIntact}'s comparison.
     */
    static String id(byte[] content) {
        CRC32C crc = new CRC32C();
        crc.update(content);
        return HexFormat.of().toHexDigits((int) crc.getValue()) + HexFormat.of().toHexDigits(content.length);
    }
}
