package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * pi ({@code @mariozechner/pi-coding-agent}), the real CLI at the version pinned in {@code .ci/agents}, in the jail
 * under its built-in preset, with each provider's default API host routed to {@link LlmStub}: {@code pi -p} with
 * Anthropic (Messages API, SSE; started by name as a user does), OpenAI (Responses API, SSE) and OpenRouter, an
 * OpenAI-compatible provider (Chat Completions, SSE).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class PiAgentTest {
    static final String PACKAGE = "@mariozechner/pi-coding-agent";

    static LlmStub stub;

    @TempDir
    static Path stubDir;

    @TempDir
    Path dir;

    private String lastErr = "";

    @BeforeAll
    static void startStub() throws Exception {
        stub = LlmStub.start(stubDir, "stub-answer-pi-" + Long.toHexString(System.nanoTime()));
    }

    @AfterAll
    static void stopStub() {
        if (stub != null) {
            stub.close();
        }
    }

    @Test
    void anthropicStartedByName() {
        RealAgents.Key key =
                new RealAgents.Key("ANTHROPIC_API_KEY", "sk-ant-api03-real-pi-key-0b5d3f7a9c", "x-api-key", "");
        // This user also keeps OPENAI_API_KEY=dummy for a local model server: too short to be a key, it is skipped
        // (with a note), and the session runs (the proxy refused to start on it before).
        List<LlmStub.Request> seen = session(
                "api.anthropic.com", key, false, "--provider", "anthropic", "--model", "claude-3-5-haiku-latest");
        assertTrue(lastErr.contains("the value of OPENAI_API_KEY is shorter than 8 characters"), lastErr);
        assertTrue(
                seen.stream()
                        .anyMatch(
                                r -> r.path().equals("/v1/messages") && r.body().contains("\"stream\":true")),
                () -> RealAgents.paths(seen).toString());
    }

    @Test
    void openAiResponses() {
        RealAgents.Key key =
                new RealAgents.Key("OPENAI_API_KEY", "sk-proj-real-pi-key-6a2c8e4f1b", "authorization", "Bearer ");
        List<LlmStub.Request> seen =
                session("api.openai.com", key, true, "--provider", "openai", "--model", "gpt-4o-mini");
        assertTrue(
                seen.stream().anyMatch(r -> r.path().equals("/v1/responses")),
                () -> RealAgents.paths(seen).toString());
    }

    @Test
    void openRouterAnOpenAiCompatibleProvider() {
        RealAgents.Key key =
                new RealAgents.Key("OPENROUTER_API_KEY", "sk-or-v1-real-pi-key-3d9f1b7e5a", "authorization", "Bearer ");
        List<LlmStub.Request> seen =
                session("openrouter.ai", key, true, "--provider", "openrouter", "--model", "openai/gpt-4o-mini");
        assertTrue(
                seen.stream().anyMatch(r -> r.path().equals("/api/v1/chat/completions")),
                () -> RealAgents.paths(seen).toString());
    }

    /** One {@code pi -p} session with {@code key} set on the host and its host routed to the stub. */
    private List<LlmStub.Request> session(String host, RealAgents.Key key, boolean probed, String... provider) {
        RealAgents.Installed pi = RealAgents.require(PACKAGE, "pi");
        AgentjailRun run = AgentjailRun.in(dir)
                .env("PATH", pi.launcherPath())
                .env(key.variable(), key.real())
                .policy("version: 1\n" + stub.routes(List.of(host)));
        if (!probed) {
            run.env("OPENAI_API_KEY", "dummy");
        }
        List<String> command = new java.util.ArrayList<>(List.of("pi", "-p"));
        command.addAll(List.of(provider));
        command.add("Say hello from the jail");
        int before = stub.requests().size();

        AgentjailRun.Outcome o = probed
                ? run.options("--preset", "pi")
                        .run(RealAgents.probed(List.of(key.variable()), command).toArray(String[]::new))
                : run.withoutSeparator().run(command.toArray(String[]::new));

        lastErr = o.err();
        List<LlmStub.Request> seen = RealAgents.assertSession(run, o, stub, before, List.of(host), key);
        if (probed) {
            RealAgents.assertPlaceholder(o, key);
        }
        return seen;
    }
}
