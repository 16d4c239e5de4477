package dev.agentjail.cli;

import dev.agentjail.jail.Placeholders;
import dev.agentjail.jail.ProtectedPath;
import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
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

    /** Notes {@code placeholders} of {@code project} for session {@code id}; empty when there are none. */
    static Optional<Path> write(Path dir, String id, Path project, List<ProtectedPath> placeholders)
            throws IOException {
        if (placeholders.isEmpty()) {
            return Optional.empty();
        }
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
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
        Path file = dir.resolve(id + SUFFIX);
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        return Optional.of(file);
    }

    /** Forgets a journal once its session has removed its placeholders itself. */
    static void delete(Optional<Path> file) {
        file.ifPresent(f -> {
            try {
                Files.deleteIfExists(f);
            } catch (IOException e) {
                // A journal left behind is swept by the next session, which finds nothing left to remove.
            }
        });
    }

    /**
     * Removes the placeholders that dead sessions left in {@code project} and forgets their journals; says so on
     * {@code err}. Problems are reported and never stop the session that sweeps.
     */
    static void sweep(Path dir, Path project, PrintWriter err) {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> journals = new ArrayList<>();
        try (DirectoryStream<Path> found = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            found.forEach(journals::add);
        } catch (IOException e) {
            err.println("agentjail: cannot read " + dir + ": " + IoErrors.describe(e));
            return;
        }
        for (Path journal : journals) {
            Journal j;
            try {
                j = read(journal);
            } catch (IOException | IllegalArgumentException e) {
                err.println("agentjail: ignoring the unreadable session journal " + journal + ": " + e.getMessage());
                continue;
            }
            if (!j.project().equals(project) || j.alive()) {
                continue;
            }
            String session = journal.getFileName().toString().replace(SUFFIX, "");
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
                throw new IllegalArgumentException("a placeholder outside its project");
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
