package dev.agentjail.cli;

import dev.agentjail.jail.Placeholders;
import dev.agentjail.jail.ProtectedPath;
import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a session's placeholders were, kept in agentjail's state while it runs (docs/jail.md "Protected paths"): bwrap
 * makes their mount points on the host, and a launcher that is killed (SIGKILL, the OOM killer, power loss) cannot
 * remove them. Left behind, an empty read-only {@code .agentjail.yaml} stops the next session on the project ("empty
 * policy") and empty {@code .envrc}, {@code .git/}, {@code HEAD} files confuse the user's tools. The next session on
 * the project, before it reads any policy, removes those a dead session left that are still empty (the same removal
 * as at a session's end: no link is followed), and says that session's end-of-session review did not run.
 *
 * <p>A journal names its launcher by pid and start time, so a live session's is never swept; it is a file of the
 * user's state directory, which no jail sees. Paths are written in hex: a protected name may hold any character.
 *
 * <p>The journals are also the claims of live sessions on their projects ({@link #claim}): one session at a time on a
 * project, and none on a project inside or around it. Another session's placeholders are mount points of this one's
 * jail too (they are files of the project when it starts), and the end of the session that made them removes them;
 * the kernel then takes the mount off in every jail that has one there, so the agent of a session still running could
 * write {@code .envrc}, {@code .git/hooks} or {@code .bashrc} into the host's project. A second session refuses to
 * start instead, naming the one running.
 */
final class PlaceholderJournal {
    private static final String HEADER = "agentjail-placeholders 1";
    private static final String SUFFIX = ".placeholders";
    private static final HexFormat HEX = HexFormat.of();

    private PlaceholderJournal() {}

    static Path dir(Map<String, String> env) {
        return Paths.stateHome(env).resolve("sessions");
    }

    /** The placeholders bwrap will make for {@code paths}: the missing ones, as files or directories. */
    static List<ProtectedPath> placeholders(List<ProtectedPath> paths) {
        return paths.stream()
                .filter(p ->
                        p.state() == ProtectedPath.State.MISSING_FILE || p.state() == ProtectedPath.State.MISSING_DIR)
                .toList();
    }

    /**
     * A live session's claim: its journal, and what the journal says now (rewritten whole each time). Used by the
     * session's own thread only.
     */
    static final class Claim {
        private final Path file;
        private final String session;
        private final Path project;
        private List<ProtectedPath> placeholders = List.of();

        Claim(Path file, String session, Path project) {
            this.file = file;
            this.session = session;
            this.project = project;
        }

        Path file() {
            return file;
        }

        String session() {
            return session;
        }

        Path project() {
            return project;
        }
    }

    private static final String LOCK = "claims.lock";

    /** A journal names a few dozen paths: anything much larger is none (and is not read whole). */
    static final long MAX_JOURNAL_BYTES = 1 << 20;

    /**
     * Claims {@code project} for session {@code id}: under the sessions directory's lock, removes what dead sessions
     * left there ({@link #sweep}), refuses (usage, nothing started) while a live session's project is this one, inside
     * it or around it, and writes this session's journal with no placeholders yet.
     */
    static Claim claim(Path dir, String id, Path project, PrintWriter err) {
        try {
            return claimUnder(dir, id, project, err);
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot note the session in " + dir + " (" + IoErrors.describe(e) + "): without it another"
                            + " session on the project could take this one's protected paths off");
        }
    }

    private static Claim claimUnder(Path dir, String id, Path project, PrintWriter err) throws IOException {
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        try (FileChannel lockFile = lockFile(dir);
                FileLock held = lockFile.lock()) {
            for (Found found : journals(dir, err)) {
                Journal j = found.journal();
                if (j.alive() && overlap(j.project(), project)) {
                    throw new CliException(ExitCodes.USAGE, busy(found, project));
                }
            }
            sweep(dir, project, err);
            Claim claim = new Claim(dir.resolve(id + SUFFIX), id, project);
            replace(claim);
            return claim;
        }
    }

    /** What a live session of this user's that overlaps {@code project} is, in the words of a refusal; none if none. */
    static Optional<String> runningOn(Path dir, Path project) {
        for (Found found : journals(dir, new PrintWriter(java.io.Writer.nullWriter()))) {
            if (found.journal().alive() && overlap(found.journal().project(), project)) {
                return Optional.of(busy(found, project));
            }
        }
        return Optional.empty();
    }

    /**
     * Whether one project is the other or inside it: by their paths, and by their directories, so that a second path
     * to the same directory (a bind mount of it elsewhere) is no way around the claim.
     */
    static boolean overlap(Path a, Path b) {
        if (a.startsWith(b) || b.startsWith(a)) {
            return true;
        }
        Object keyA = fileKey(a);
        Object keyB = fileKey(b);
        if (keyA != null
                && keyB != null
                && (upward(a).contains(keyB) || upward(b).contains(keyA))) {
            return true;
        }
        // A bind mount of a directory inside the other, elsewhere: its own parents are not the other's.
        Optional<MountedPath> placeA = MountedPath.of(a);
        Optional<MountedPath> placeB = MountedPath.of(b);
        return placeA.isPresent() && placeB.isPresent() && placeA.get().overlaps(placeB.get());
    }

    private static boolean inside(Optional<MountedPath> inner, Optional<MountedPath> outer) {
        return inner.isPresent()
                && outer.isPresent()
                && inner.get().device().equals(outer.get().device())
                && inner.get().path().startsWith(outer.get().path());
    }

    /** The directory and each one above it, by device and inode. */
    private static List<Object> upward(Path dir) {
        List<Object> keys = new ArrayList<>();
        for (Path p = dir; p != null; p = p.getParent()) {
            Object key = fileKey(p);
            if (key != null) {
                keys.add(key);
            }
        }
        return keys;
    }

    private static Object fileKey(Path dir) {
        try {
            return Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    private static String busy(Found found, Path project) {
        Journal j = found.journal();
        Object key = fileKey(project);
        String where;
        if (j.project().equals(project)) {
            where = "on " + project;
        } else if (key != null && key.equals(fileKey(j.project()))) {
            where = "on " + j.project() + ", the same directory as " + project;
        } else if (j.project().startsWith(project)
                || upward(j.project()).contains(key)
                || inside(MountedPath.of(j.project()), MountedPath.of(project))) {
            where = "on " + j.project() + ", inside " + project;
        } else {
            where = "on " + j.project() + ", around " + project;
        }
        String since = j.startMillis() > 0
                ? ", started "
                        + DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss")
                                .withZone(ZoneId.systemDefault())
                                .format(Instant.ofEpochMilli(j.startMillis()))
                : "";
        return "another agentjail session is running " + where + " (session " + found.session() + ", launcher pid "
                + j.pid() + since + "): one session at a time on a project and the projects inside it, since the"
                + " end of one would take the protected paths' mounts off the other's jail; wait for it to end, or"
                + " stop it (kill " + j.pid() + ")";
    }

    /** Notes the placeholders bwrap is about to make for the claiming session, replacing its journal whole. */
    static void note(Claim claim, List<ProtectedPath> placeholders) throws IOException {
        claim.placeholders = List.copyOf(placeholders);
        replace(claim);
    }

    private static FileChannel lockFile(Path dir) throws IOException {
        Files.createDirectories(dir);
        return FileChannel.open(
                dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
    }

    /** Ends a claim once its session has removed its placeholders itself. */
    static void release(Claim claim) {
        try {
            Files.deleteIfExists(claim.file());
        } catch (IOException e) {
            // A journal left behind is swept by the next session, which finds nothing left to remove.
        }
    }

    private static void replace(Claim claim) throws IOException {
        Path temporary = claim.file().resolveSibling("." + claim.session() + ".tmp");
        Files.deleteIfExists(temporary);
        Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(
                temporary,
                text(claim),
                StandardCharsets.UTF_8,
                StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS);
        Files.move(temporary, claim.file(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static String text(Claim claim) {
        Path project = claim.project();
        List<ProtectedPath> placeholders = claim.placeholders;
        ProcessHandle self = ProcessHandle.current();
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        text.append("pid ")
                .append(self.pid())
                .append(' ')
                .append(self.info().startInstant().map(Instant::toEpochMilli).orElse(0L))
                .append('\n');
        text.append("project ").append(hex(project.toString())).append('\n');
        for (ProtectedPath p : placeholders) {
            text.append(p.state() == ProtectedPath.State.MISSING_DIR ? "dir " : "file ")
                    .append(hex(p.relative().toString()))
                    .append('\n');
        }
        return text.toString();
    }

    /**
     * Removes the placeholders that dead sessions left in {@code project} and forgets their journals; says so on
     * {@code err}. Problems are reported and never stop the session that sweeps.
     */
    static void sweep(Path dir, Path project, PrintWriter err) {
        for (Found found : journals(dir, err)) {
            Journal j = found.journal();
            Path journal = found.file();
            // The same directory by another path (a bind mount, a renamed parent's old name) is the same project.
            Object key = fileKey(project);
            if (j.alive() || !(j.project().equals(project) || (key != null && key.equals(fileKey(j.project()))))) {
                continue;
            }
            String session = found.session();
            try {
                List<Path> kept = Placeholders.remove(project, j.placeholders());
                for (Path k : kept) {
                    err.println("agentjail: kept " + k + ": a placeholder of session " + session + ", no longer empty");
                }
                err.println("agentjail: session " + session + " on " + project + " did not end (its launcher was"
                        + " killed): removed the placeholders it left; its end-of-session review did not run, so"
                        + " check what it changed (git status, `agentjail review`)");
                Files.deleteIfExists(journal);
            } catch (IOException e) {
                err.println("agentjail: cannot remove the placeholders session " + session + " left in " + project
                        + ": " + IoErrors.describe(e));
            }
        }
        err.flush();
    }

    private record Found(Path file, String session, Journal journal) {}

    /** The journals in {@code dir} that read; each one that does not is named on {@code err} and skipped. */
    private static List<Found> journals(Path dir, PrintWriter err) {
        List<Found> out = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> found = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            found.forEach(files::add);
        } catch (IOException e) {
            err.println("agentjail: cannot read " + dir + ": " + IoErrors.describe(e));
            return out;
        }
        for (Path file : files) {
            try {
                java.nio.file.attribute.BasicFileAttributes attributes = Files.readAttributes(
                        file, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!attributes.isRegularFile() || attributes.size() > MAX_JOURNAL_BYTES) {
                    throw new IllegalArgumentException("not a regular file of at most " + MAX_JOURNAL_BYTES + " bytes");
                }
                String name = file.getFileName().toString();
                out.add(new Found(file, name.substring(0, name.length() - SUFFIX.length()), read(file)));
            } catch (IOException | IllegalArgumentException e) {
                err.println("agentjail: ignoring the unreadable session journal " + file + ": " + e.getMessage());
            }
        }
        return out;
    }

    private record Journal(long pid, long startMillis, Path project, List<ProtectedPath> placeholders) {
        /** Whether the launcher that wrote it still runs: the same pid, started at the same time. */
        boolean alive() {
            return ProcessHandle.of(pid)
                    .filter(ProcessHandle::isAlive)
                    .map(h -> h.info().startInstant().map(Instant::toEpochMilli).orElse(0L) == startMillis)
                    .orElse(false);
        }
    }

    private static Journal read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.size() < 3 || !lines.get(0).equals(HEADER)) {
            throw new IllegalArgumentException("not a placeholder journal");
        }
        String[] pid = lines.get(1).split(" ");
        if (pid.length != 3 || !pid[0].equals("pid") || !lines.get(2).startsWith("project ")) {
            throw new IllegalArgumentException("malformed");
        }
        Path project = Path.of(text(lines.get(2).substring("project ".length())));
        List<ProtectedPath> placeholders = new ArrayList<>();
        for (String line : lines.subList(3, lines.size())) {
            int space = line.indexOf(' ');
            String kind = space < 0 ? line : line.substring(0, space);
            ProtectedPath.State state = switch (kind) {
                case "file" -> ProtectedPath.State.MISSING_FILE;
                case "dir" -> ProtectedPath.State.MISSING_DIR;
                default -> throw new IllegalArgumentException("unknown entry " + kind);
            };
            Path relative = Path.of(text(line.substring(space + 1)));
            if (relative.isAbsolute() || relative.normalize().startsWith("..")) {
                throw new IllegalArgumentException("a placeholder outside its directory");
            }
            placeholders.add(new ProtectedPath(relative, state, Optional.empty()));
        }
        return new Journal(Long.parseLong(pid[1]), Long.parseLong(pid[2]), project, placeholders);
    }

    private static String hex(String text) {
        return HEX.formatHex(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(String hex) {
        return new String(HEX.parseHex(hex), StandardCharsets.UTF_8);
    }
}
