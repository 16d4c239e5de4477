package dev.agentjail.it.jail;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
}
