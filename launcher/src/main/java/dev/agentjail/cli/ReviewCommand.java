package dev.agentjail.cli;

import dev.agentjail.jail.Quarantine;
import dev.agentjail.jail.SurfaceReview;
import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code agentjail review}: lists, restores or discards what session reviews quarantined. */
@Command(
        name = "review",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Lists, restores or discards what agentjail quarantined after its sessions.",
            "",
            "When a session ends, agentjail moves what the agent created or changed on",
            "surfaces the host later runs into $XDG_STATE_HOME/agentjail/quarantine/:",
            "nested .git, .envrc, .vscode/, .claude/, .mcp.json, hook managers, git",
            "config and hooks, a rebase todo with exec lines, the agent's settings and",
            "plugins in your home (see docs/review.md). An item is what the agent",
            "wrote: read it before you restore it.",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  List what was quarantined for this project, newest first:",
            "    agentjail review",
            "  ... for every project:",
            "    agentjail review --all",
            "  Put one item back:",
            "    agentjail review --restore 3f2a9c41d0e8b7a6/project/.envrc",
            "  Put all of a session's items back, replacing what is there now:",
            "    agentjail review --restore 3f2a9c41d0e8b7a6 --force",
            "  Delete a session's quarantine:",
            "    agentjail review --discard 3f2a9c41d0e8b7a6",
            "  Finish a review that stopped at its bounds (the session said so):",
            "    agentjail review --finish",
            "",
            "Exit status: 0 done; 1 a path to restore exists (see --force), a review",
            "--finish could not complete, or an I/O failure; 2 bad usage, or no such",
            "session or item."
        })
final class ReviewCommand implements Callable<Integer> {
    /** Below the state directory ({@link Paths#stateHome}). */
    static final String QUARANTINE_DIR = "quarantine";

    @Spec
    CommandSpec spec;

    @Option(
            names = "--project",
            paramLabel = "DIR",
            description = "List the items of this project (default: the current directory).")
    Path project;

    @Option(names = "--all", description = "List the items of every project.")
    boolean all;

    @ArgGroup(exclusive = true)
    Action action;

    @Option(names = "--force", description = "With --restore: replace what exists at an item's original path.")
    boolean force;

    /** The environment the state directory is found from; tests set their own. */
    Map<String, String> env = System.getenv();

    static final class Action {
        @Option(
                names = "--restore",
                paramLabel = "SESSION[/PATH]",
                description = "Move a session's items (or the one at, or those below, PATH as listed) back where"
                        + " they came from. Refuses if one of those paths exists, unless --force.")
        String restore;

        @Option(names = "--discard", paramLabel = "SESSION", description = "Delete a session's quarantined items.")
        String discard;

        @Option(
                names = "--finish",
                description = "Sweep the project (with --all: every project) for what the agent changed past the"
                        + " bounds of an unfinished session review, judged by change time, and quarantine it. Until"
                        + " then, sessions on that project refuse to start.")
        boolean finish;
    }

    /** Where the quarantine lives for {@code env}. */
    static Path quarantineDir(Map<String, String> env) {
        return Paths.stateHome(env).resolve(QUARANTINE_DIR);
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        Quarantine quarantine =
                new Quarantine(quarantineDir(env).toAbsolutePath().normalize(), Clock.systemUTC());
        if (force && (action == null || action.restore == null)) {
            throw new ParameterException(spec.commandLine(), "--force only goes with --restore");
        }
        if (action != null && !action.finish && (all || project != null)) {
            throw new ParameterException(spec.commandLine(), "--all and --project only go with listing and --finish");
        }
        try {
            if (action != null && action.finish) {
                boolean complete = finish(out, quarantine);
                out.flush();
                return complete ? ExitCodes.OK : ExitCodes.FAILURE;
            } else if (action != null && action.restore != null) {
                restore(out, quarantine, action.restore);
            } else if (action != null) {
                List<Quarantine.Item> gone = quarantine.discard(session(action.discard));
                out.println("Discarded " + gone.size() + " quarantined item" + (gone.size() == 1 ? "" : "s")
                        + " of session " + action.discard);
            } else {
                list(out, quarantine);
            }
        } catch (FileAlreadyExistsException e) {
            throw new CliException(ExitCodes.FAILURE, IoErrors.describe(e), e);
        } catch (NoSuchFileException e) {
            throw new CliException(ExitCodes.USAGE, IoErrors.describe(e), e);
        } catch (IOException e) {
            throw new CliException(ExitCodes.FAILURE, "review: " + IoErrors.describe(e), e);
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** Sweeps each unfinished review of the project (or all); false when one still could not complete. */
    private boolean finish(PrintWriter out, Quarantine quarantine) throws IOException {
        Optional<Path> only = all ? Optional.empty() : Optional.of(projectDir());
        List<Quarantine.Pending> todo = quarantine.pending().stream()
                .filter(p -> only.isEmpty() || concerns(p, only.get()))
                .toList();
        if (todo.isEmpty()) {
            out.println("No unfinished review" + only.map(p -> " for " + p).orElse(""));
            return true;
        }
        boolean complete = true;
        for (Quarantine.Pending p : todo) {
            if (p.roots().isEmpty()) {
                out.println("Session " + p.session() + ": " + LogRecordText.printable(p.reason())
                        + "; check the projects that session could write to, then delete that file");
                complete = false;
                continue;
            }
            out.println("Session " + p.session() + ", project "
                    + LogRecordText.printable(p.project().toString()) + ": looking for surfaces changed since "
                    + p.since() + " ...");
            out.flush();
            List<SurfaceReview.Finding> findings = new SurfaceReview(SurfaceReview.Limits.FINISH, Clock.systemUTC())
                    .sweep(p.project(), p.roots(), p.since(), quarantine.directory(), p.session());
            findings.forEach(f -> out.println("  " + LogRecordText.printable(f.describe())));
            if (findings.stream().anyMatch(f -> f.change() == SurfaceReview.Change.INCOMPLETE)) {
                complete = false;
            } else {
                out.println("  review finished" + (findings.isEmpty() ? ": nothing new" : ""));
            }
        }
        return complete;
    }

    /** Whether an unfinished review concerns sessions on {@code project} (an unreadable record concerns all). */
    static boolean concerns(Quarantine.Pending pending, Path project) {
        return pending.roots().isEmpty()
                || project.startsWith(pending.project())
                || pending.project().startsWith(project);
    }

    private void list(PrintWriter out, Quarantine quarantine) throws IOException {
        Optional<Path> only = all ? Optional.empty() : Optional.of(projectDir());
        for (Quarantine.Pending p : quarantine.pending()) {
            if (only.isEmpty() || concerns(p, only.get())) {
                out.println("UNFINISHED review of session " + p.session() + " (project "
                        + LogRecordText.printable(p.project().toString()) + "): "
                        + LogRecordText.printable(p.reason()) + "; run agentjail review --finish");
            }
        }
        List<Quarantine.Item> items = quarantine.list().stream()
                .filter(i -> only.isEmpty() || i.project().equals(only.get()))
                .toList();
        if (items.isEmpty()) {
            out.println("Nothing quarantined"
                    + only.map(p -> " for " + p + " (--all lists every project's)")
                            .orElse(" in " + quarantine.directory()));
            return;
        }
        String session = null;
        for (Quarantine.Item i : items) {
            if (!i.session().equals(session)) {
                session = i.session();
                out.println("Session " + session + " (" + i.time() + "), project "
                        + LogRecordText.printable(i.project().toString()) + ":");
            }
            // Names come from the agent: printed with their control characters escaped, as the log's are.
            out.println("  " + LogRecordText.printable(i.id()) + "  " + i.kind().code() + ", "
                    + i.change().name().toLowerCase(Locale.ROOT)
                    + " " + i.type().name().toLowerCase(Locale.ROOT) + ", from "
                    + LogRecordText.printable(i.original().toString())
                    + i.sha256().map(s -> ", sha256 " + s).orElse(""));
        }
        out.println("agentjail review --restore ID puts an item back, --discard SESSION deletes a session's.");
    }

    private void restore(PrintWriter out, Quarantine quarantine, String spec) throws IOException {
        int slash = spec.indexOf('/');
        String session = session(slash < 0 ? spec : spec.substring(0, slash));
        Optional<Path> prefix = slash < 0 || slash == spec.length() - 1
                ? Optional.empty()
                : Optional.of(Path.of(spec.substring(slash + 1)).normalize());
        for (Quarantine.Item i : quarantine.restore(session, prefix, force)) {
            out.println("Restored " + LogRecordText.printable(i.original().toString()) + " ("
                    + i.kind().code() + ", from " + LogRecordText.printable(i.id()) + ")");
        }
    }

    private String session(String session) {
        if (!session.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,63}")) {
            throw new ParameterException(spec.commandLine(), "not a session id: " + session);
        }
        return session;
    }

    private Path projectDir() throws IOException {
        Path dir = (project != null ? project : Path.of("")).toAbsolutePath().normalize();
        if (!Files.isDirectory(dir)) {
            throw new CliException(ExitCodes.USAGE, "--project: not a directory: " + dir);
        }
        return dir.toRealPath();
    }
}
