package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claude Code, the real CLI at the version pinned in {@code .ci/agents}, in the jail under its built-in preset, its
 * default API host {@code api.anthropic.com} routed to {@link LlmStub} (Messages API, SSE): {@code claude -p}, and its
 * TUI under a pseudo-terminal (prompt, answer, resize, Ctrl-C).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ClaudeCodeAgentTest {
    static final String PACKAGE = "@anthropic-ai/claude-code";
    static final String HOST = "api.anthropic.com";
    static final RealAgents.Key KEY =
            new RealAgents.Key("ANTHROPIC_API_KEY", "sk-ant-api03-real-claude-key-7c1e9a4b2d", "x-api-key", "");

    /**
     * Claude Code's first run also checks that its sign-in host answers (platform.claude.com, which the preset allows),
     * so the stub stands in for that host too.
     */
    static final List<String> HOSTS = List.of(HOST, "platform.claude.com");

    /** How Claude Code shows a key from the environment: its first characters, then the last 20 of the value. */
    static final Pattern SHOWN_KEY = Pattern.compile(KEY.variable() + ": \\S*\\.\\.\\.(\\S{20})");

    static final Duration SCREEN_LIMIT = Duration.ofSeconds(40);

    static LlmStub stub;

    @TempDir
    static Path stubDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startStub() throws Exception {
        stub = LlmStub.start(stubDir, "stub-answer-claude-" + Long.toHexString(System.nanoTime()));
    }

    @AfterAll
    static void stopStub() {
        if (stub != null) {
            stub.close();
        }
    }

    @Test
    void printModeAnswersFromTheStubWithTheRealKeyInjected() {
        RealAgents.Installed claude = RealAgents.require(PACKAGE, "claude");
        AgentjailRun run = AgentjailRun.in(dir)
                .env("PATH", claude.launcherPath())
                .env(KEY.variable(), KEY.real())
                .policy("version: 1\n" + stub.routes(List.of(HOST)))
                .options("--preset", "claude-code");
        int before = stub.requests().size();

        AgentjailRun.Outcome o =
                run.run(RealAgents.probed(List.of(KEY.variable()), List.of("claude", "-p", "Say hello from the jail"))
                        .toArray(String[]::new));

        RealAgents.assertSession(run, o, stub, before, List.of(HOST), KEY);
        RealAgents.assertPlaceholder(o, KEY);
    }

    @Test
    void theTuiUnderAPseudoTerminalAnswersRedrawsOnResizeAndExitsOnCtrlC() throws Exception {
        RealAgents.Installed claude = RealAgents.require(PACKAGE, "claude");
        AgentjailRun run = AgentjailRun.in(dir)
                .env("PATH", claude.launcherPath())
                .env(KEY.variable(), KEY.real())
                .policy("version: 1\n" + stub.routes(HOSTS))
                .withoutSeparator();
        int before = stub.requests().size();
        long start = System.nanoTime();
        String screen;
        int exit;
        try (TmuxTerminal tty = TmuxTerminal.start(
                dir.resolve("tty"), run.argv(List.of("claude")), run.launcherEnv(), run.project(), 100, 30)) {
            // A first run in a fresh home: theme, the key from the environment, security notes, trusting the project.
            tty.await("the theme choice", SCREEN_LIMIT, s -> s.contains("Choose the text style"));
            settle();
            tty.keys("Enter");
            String keyQuestion = tty.await(
                    "the API key question", SCREEN_LIMIT, s -> s.contains("Do you want to use this API key?"));
            Matcher shown = SHOWN_KEY.matcher(keyQuestion);
            assertTrue(shown.find(), keyQuestion);
            assertTrue(shown.group(1).matches("[0-9a-f]{20}"), () -> "not the placeholder's tail: " + shown.group());
            assertFalse(
                    keyQuestion.contains(KEY.real().substring(KEY.real().length() - 20)), "the jail has the real key");
            select(tty, "Up", "Yes");
            tty.await("the security notes", SCREEN_LIMIT, s -> s.contains("Press Enter to continue"));
            settle();
            tty.keys("Enter");
            tty.await("the trust question", SCREEN_LIMIT, s -> s.contains("Yes, I trust this folder"));
            // The prompt box is ready when its status line shows the permission mode. A dialog drawn while the machine
            // is busy may miss the first Enter (it is drawn again, the first option selected): chosen again then.
            java.util.function.Predicate<String> prompt =
                    s -> s.contains("Claude Code v") && s.contains("shift+tab to cycle");
            for (int attempt = 1; ; attempt++) {
                select(tty, "Down", "Yes, I trust this folder");
                try {
                    tty.await("the prompt", Duration.ofSeconds(15), prompt);
                    break;
                } catch (AssertionError notYet) {
                    if (attempt == 3 || !visible(tty.screen(), "Yes, I trust this folder")) {
                        tty.await("the prompt", SCREEN_LIMIT, prompt);
                        break;
                    }
                }
            }
            tty.type("Say hello from the jail");
            tty.await("the typed prompt", SCREEN_LIMIT, s -> s.contains("Say hello from the jail") && rule(s, 100));
            tty.keys("Enter");
            String answered = tty.await("the stub's answer", SCREEN_LIMIT, s -> s.contains(stub.answer()));
            tty.resize(72, 24);
            tty.await("the prompt redrawn 72 columns wide", SCREEN_LIMIT, s -> rule(s, 72));
            // Ctrl-C twice in a row quits Claude Code (once only clears the prompt).
            tty.keys("C-c");
            tty.keys("C-c");
            exit = tty.awaitExit(SCREEN_LIMIT);
            // Claude Code clears its screen on exit: what the session showed is the answer, then the launcher's end.
            screen = answered + tty.screen();
        }
        AgentjailRun.Outcome o = new AgentjailRun.Outcome(
                new Command.Result(exit, screen.getBytes(StandardCharsets.UTF_8), ""),
                run.auditLog(),
                Duration.ofNanos(System.nanoTime() - start),
                Optional.empty());
        assertEquals(0, exit, screen);
        RealAgents.assertSession(run, o, stub, before, HOSTS, KEY);
    }

    /**
     * Moves the selection with {@code key} until the option {@code option} is selected, then confirms it. A TUI may
     * draw a dialog before it listens for keys, so the arrow key is sent again until the screen shows its effect (an
     * arrow at the end of the list does nothing); Enter is sent once.
     */
    private static void select(TmuxTerminal tty, String key, String option) {
        press(tty, key, s -> visible(s, "❯ " + option));
        tty.keys("Enter");
    }

    /** Gives a dialog that has just been drawn a moment to listen for keys (Enter cannot be sent twice safely). */
    private static void settle() throws InterruptedException {
        Thread.sleep(700);
    }

    /** Sends {@code key} (again each second, at most ten times) until the visible screen satisfies {@code effect}. */
    private static void press(TmuxTerminal tty, String key, java.util.function.Predicate<String> effect) {
        for (int i = 0; i < 10; i++) {
            tty.keys(key);
            try {
                tty.await("the effect of " + key, Duration.ofSeconds(1), effect);
                return;
            } catch (AssertionError notYet) {
                // Not listening yet: send it again.
            }
        }
        throw new AssertionError(key + " had no effect; the terminal shows:\n" + tty.screen());
    }

    /** Whether {@code text} is on the screen's last 30 lines (the window, not the scrollback). */
    private static boolean visible(String screen, String text) {
        List<String> lines = screen.stripTrailing().lines().toList();
        return lines.subList(Math.max(0, lines.size() - 30), lines.size()).stream()
                .anyMatch(l -> l.contains(text));
    }

    /** Whether the screen has one of Claude Code's horizontal rules, {@code columns} wide (the prompt box). */
    private static boolean rule(String screen, int columns) {
        return screen.lines().anyMatch(l -> l.stripTrailing().equals("─".repeat(columns)));
    }
}
