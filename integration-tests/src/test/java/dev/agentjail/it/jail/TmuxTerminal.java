package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A real terminal for a TUI: a tmux server of its own (its socket in a test directory) runs one command in a window of
 * a given size; the test types keys, reads the screen as tmux renders it, resizes the window (tmux sets the
 * pseudo-terminal's size, and the kernel sends SIGWINCH to its foreground process group) and gets the exit code.
 */
final class TmuxTerminal implements AutoCloseable {
    static final Path TMUX = Path.of("/usr/bin/tmux");
    private static final Duration COMMAND_LIMIT = Duration.ofSeconds(20);

    private final Path socket;
    private final Path exitFile;
    private final Map<String, String> env;

    private TmuxTerminal(Path socket, Path exitFile, Map<String, String> env) {
        this.socket = socket;
        this.exitFile = exitFile;
        this.env = env;
    }

    /**
     * Starts {@code argv} in a {@code columns}×{@code rows} window, in {@code workDir}, with {@code env} added to the
     * server's environment; skips (locally) or fails (in CI) without tmux.
     */
    static TmuxTerminal start(Path dir, List<String> argv, Map<String, String> env, Path workDir, int columns, int rows)
            throws IOException {
        Prerequisites.require(TMUX);
        Files.createDirectories(dir);
        Path exitFile = dir.resolve("exit-code");
        String command = "cd " + quote(workDir.toString()) + " && "
                + argv.stream().map(TmuxTerminal::quote).collect(Collectors.joining(" "))
                + "; echo $? > " + quote(exitFile.toString())
                // The window stays (its last screen readable) until close() ends the server.
                + "; sleep 600";
        TmuxTerminal t = new TmuxTerminal(dir.resolve("tmux.sock"), exitFile, Map.copyOf(env));
        Map<String, String> serverEnv = new java.util.HashMap<>(env);
        serverEnv.put("TERM", "xterm-256color");
        Command.Result r = Command.run(
                COMMAND_LIMIT,
                t.tmux(
                        "-f",
                        "/dev/null",
                        "new-session",
                        "-d",
                        "-s",
                        "agent",
                        "-x",
                        String.valueOf(columns),
                        "-y",
                        String.valueOf(rows),
                        "sh",
                        "-c",
                        command),
                serverEnv,
                workDir);
        assertEquals(0, r.exitCode(), () -> "tmux new-session: " + r.describe());
        return t;
    }

    /** What the window shows now, with its scrollback. */
    String screen() {
        Command.Result r =
                Command.run(COMMAND_LIMIT, tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", "agent"), env, null);
        return r.exitCode() == 0 ? r.out() : "";
    }

    /** Waits up to {@code limit} until the screen satisfies {@code condition}; fails with the screen otherwise. */
    String await(String what, Duration limit, Predicate<String> condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        String screen = screen();
        while (!condition.test(screen)) {
            if (System.nanoTime() > deadline || exitCode().isPresent()) {
                throw new AssertionError("the terminal never showed " + what + "; it shows:\n" + screen);
            }
            sleep(200);
            screen = screen();
        }
        return screen;
    }

    /** Types {@code text} literally. */
    void type(String text) {
        send("-l", text);
    }

    /** Sends tmux key names ({@code Enter}, {@code Up}, {@code C-c}). */
    void keys(String... keys) {
        List<String> args = new ArrayList<>(List.of(keys));
        send(args.toArray(String[]::new));
    }

    /** Resizes the window (and so the pseudo-terminal). */
    void resize(int columns, int rows) {
        Command.Result r = Command.run(
                COMMAND_LIMIT,
                tmux("resize-window", "-t", "agent", "-x", String.valueOf(columns), "-y", String.valueOf(rows)),
                env,
                null);
        assertEquals(0, r.exitCode(), () -> "tmux resize-window: " + r.describe());
    }

    /** The command's exit code, once it has ended. */
    OptionalInt exitCode() {
        try {
            String text = Files.exists(exitFile) ? Files.readString(exitFile).strip() : "";
            return text.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(text));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits up to {@code limit} for the command to end; returns its exit code. */
    int awaitExit(Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (exitCode().isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "the command did not end within " + limit + "; the terminal shows:\n" + screen());
            }
            sleep(200);
        }
        return exitCode().getAsInt();
    }

    @Override
    public void close() {
        Command.run(COMMAND_LIMIT, tmux("kill-server"), env, null);
    }

    private void send(String... args) {
        List<String> argv = new ArrayList<>(List.of("send-keys", "-t", "agent"));
        argv.addAll(List.of(args));
        Command.Result r = Command.run(COMMAND_LIMIT, tmux(argv.toArray(String[]::new)), env, null);
        assertEquals(0, r.exitCode(), () -> "tmux send-keys: " + r.describe());
    }

    private List<String> tmux(String... args) {
        List<String> argv = new ArrayList<>(List.of(TMUX.toString(), "-S", socket.toString()));
        argv.addAll(List.of(args));
        return argv;
    }

    private static String quote(String arg) {
        return "'" + arg.replace("'", "'\\''") + "'";
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
