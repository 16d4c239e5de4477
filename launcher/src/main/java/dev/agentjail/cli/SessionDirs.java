package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

/**
 * Per-session private directories (0700) for the hand-off socket and the files bwrap reads: under
 * $XDG_RUNTIME_DIR/agentjail when that is usable, else /tmp/agentjail-UID.
 */
final class SessionDirs {
    /** Where the hand-off socket of a session directory made by {@link #createForUser} lives. */
    static final String HANDOFF_DIR = "handoff";

    private SessionDirs() {}

    static Path create(Map<String, String> env, String session) {
        Path base = base(env);
        try {
            privateDir(base, "rwx------");
            Path dir = base.resolve(session);
            Files.createDirectory(
                    dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            return dir;
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot create the session directory under " + base + ": " + IoErrors.describe(e));
        }
    }

    /**
     * For a root launch whose jail runs as {@code user}: bwrap then runs as that user and must reach the files it
     * binds, so the base and the session directory are root's but searchable (0711: no one can list them or change
     * anything in them), and the hand-off socket lives in {@link #HANDOFF_DIR}, private to the jail's user, whose
     * uid the proxy then expects of its peer. The files bwrap reads by descriptor stay root's own (0600).
     */
    static Path createForUser(String session, int uid) {
        Path base = forUserBase();
        try {
            privateDir(base, "rwx--x--x");
            Path dir = base.resolve(session);
            Files.createDirectory(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
            Path handoff = Files.createDirectory(dir.resolve(HANDOFF_DIR));
            Files.setPosixFilePermissions(handoff, PosixFilePermissions.fromString("rwx------"));
            Files.setAttribute(handoff, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
            return dir;
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot create the session directory under " + base + ": " + IoErrors.describe(e));
        }
    }

    /** Every directory sessions of this user may live in (whether it exists or not). */
    static List<Path> bases(Map<String, String> env) {
        return List.of(
                base(env), Path.of(System.getProperty("java.io.tmpdir"), "agentjail-" + Uids.current()), forUserBase());
    }

    private static Path forUserBase() {
        return Path.of(System.getProperty("java.io.tmpdir"), "agentjail-" + Uids.current() + "-jails");
    }

    private static Path base(Map<String, String> env) {
        String runtime = env.get("XDG_RUNTIME_DIR");
        if (runtime != null
                && !runtime.isBlank()
                && Files.isDirectory(Path.of(runtime))
                && Files.isWritable(Path.of(runtime))) {
            return Path.of(runtime, "agentjail");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "agentjail-" + Uids.current());
    }

    /** Creates the directory with {@code mode}, or checks that an existing one is ours and not a link and sets it. */
    private static void privateDir(Path dir, String mode) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Files.createDirectories(dir.getParent());
            Files.createDirectory(
                    dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
            return;
        }
        if (Files.isSymbolicLink(dir) || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(dir + " is not a directory");
        }
        int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (owner != Uids.current()) {
            throw new IOException(dir + " belongs to another user");
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
    }

    static void delete(Path dir) {
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // Best effort: the directory is private, and the next session uses a new one.
        }
    }
}
