package dev.agentjail.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A session's hold on its project for every user of the machine, beside its {@link PlaceholderJournal.Claim} (which
 * only this user's sessions with this state directory see): {@code agentjail-init hold} takes flock(2) of the project
 * exclusive and of each directory above it shared, and keeps them while the launcher runs (its standard input is the
 * launcher's pipe, which closes however the launcher ends). A second session on the project, inside it or around it,
 * whoever starts it (root for a user's project, the same user with another {@code XDG_STATE_HOME}), is refused.
 */
final class ProjectHold implements AutoCloseable {
    private static final long ANSWER_SECONDS = 10;

    private final Process process;
    private volatile boolean closing;

    private ProjectHold(Process process) {
        this.process = process;
    }

    /**
     * Holds {@code project} (a real path) with {@code init}; refused (usage, nothing started) when another session
     * holds it, a directory inside it or one around it. Where the lock cannot be taken at all (a file system without
     * flock), says so on {@code err} and goes on with the claim alone.
     */
    static ProjectHold take(Path init, Path project, PrintWriter err) {
        List<String> command = new ArrayList<>(List.of(init.toString(), "hold", project.toString()));
        for (Path p = project.getParent(); p != null; p = p.getParent()) {
            command.add(p.toString());
        }
        Process process;
        String answer;
        try {
            process = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            answer = CompletableFuture.supplyAsync(() -> {
                        try {
                            return out.readLine();
                        } catch (IOException e) {
                            return null;
                        }
                    })
                    .get(ANSWER_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            err.println("agentjail: warning: cannot hold " + project + " against other users' sessions (" + e
                    + "); this user's sessions are still kept apart");
            return new ProjectHold(null);
        }
        if ("held".equals(answer)) {
            ProjectHold hold = new ProjectHold(process);
            process.onExit().thenAccept(p -> {
                if (!hold.closing) {
                    err.println("agentjail: warning: the hold on " + project + " ended while the session ran"
                            + " (agentjail-init hold exited with " + p.exitValue() + "): a session of another user"
                            + " could now start on it");
                    err.flush();
                }
            });
            return hold;
        }
        process.destroyForcibly();
        if (answer != null && answer.startsWith("busy ")) {
            String where = answer.substring("busy ".length());
            throw new CliException(
                    ExitCodes.USAGE,
                    "another agentjail session (of another user, or with another state directory), or another"
                            + " program holding flock(2) on it, has "
                            + (where.equals(project.toString()) ? project : where + ", " + relation(project, where))
                            + ": one session at a time on a project and the projects inside it, since the end of one"
                            + " would take the protected paths' mounts off the other's jail; wait for it to end");
        }
        err.println("agentjail: warning: cannot hold " + project + " against other users' sessions ("
                + (answer == null ? "no answer" : answer) + "); this user's sessions are still kept apart");
        return new ProjectHold(null);
    }

    private static String relation(Path project, String where) {
        return project.startsWith(Path.of(where)) ? "around " + project : "inside " + project;
    }

    /** Lets the project go (the helper exits when its input ends). */
    @Override
    public void close() {
        if (process == null) {
            return;
        }
        closing = true;
        try {
            process.getOutputStream().close();
            if (!process.waitFor(2, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
