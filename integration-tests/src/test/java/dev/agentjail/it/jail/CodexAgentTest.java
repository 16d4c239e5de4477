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
 * Codex, the real CLI at the version pinned in {@code .ci/agents}, in the jail under its built-in preset, its default
 * API host {@code api.openai.com} routed to {@link LlmStub}: {@code codex exec} over both transports of the Responses
 * API, the WebSocket one (the built-in provider's, for every model of Codex's catalog), started by name as a user does,
 * and SSE (a provider of the user's config for the same host with {@code supports_websockets = false}).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CodexAgentTest {
    static final String PACKAGE = "@openai/codex";
    static final String HOST = "api.openai.com";

    /**
     * Codex also asks its other allowed host for its model catalog and plugin list, even with an API key; here that
     * host has no DNS, and Codex retries for some 10 s before it goes on, so the stub answers it (404) as well.
     */
    static final List<String> HOSTS = List.of(HOST, "chatgpt.com");

    static final RealAgents.Key KEY =
            new RealAgents.Key("CODEX_API_KEY", "sk-proj-real-codex-key-4e8b2a6c1f9d", "authorization", "Bearer ");

    static LlmStub stub;

    @TempDir
    static Path stubDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startStub() throws Exception {
        stub = LlmStub.start(stubDir, "stub-answer-codex-" + Long.toHexString(System.nanoTime()));
    }

    @AfterAll
    static void stopStub() {
        if (stub != null) {
            stub.close();
        }
    }

    @Test
    void execOverTheWebSocketTransportStartedByName() {
        RealAgents.Installed codex = RealAgents.require(PACKAGE, "codex");
        AgentjailRun run = run(codex);
        int before = stub.requests().size();

        AgentjailRun.Outcome o = run.withoutSeparator().run("codex", "exec", "--skip-git-repo-check", "Say hello");

        List<LlmStub.Request> seen = RealAgents.assertSession(run, o, stub, before, HOSTS, KEY);
        assertTrue(
                seen.stream()
                        .filter(r -> r.websocket() && r.path().equals("/v1/responses"))
                        .anyMatch(r -> r.messages().stream().anyMatch(m -> m.contains("\"response.create\""))),
                () -> "no response.create over a WebSocket: " + RealAgents.paths(seen));
    }

    @Test
    void execOverTheSseTransport() {
        RealAgents.Installed codex = RealAgents.require(PACKAGE, "codex");
        AgentjailRun run = run(codex).options("--preset", "codex");
        int before = stub.requests().size();

        AgentjailRun.Outcome o = run.run(RealAgents.probed(
                        List.of(KEY.variable()),
                        List.of(
                                "codex",
                                "exec",
                                "--skip-git-repo-check",
                                "-c",
                                "model_provider=\"openai-sse\"",
                                "-c",
                                "model_providers.openai-sse={name=\"OpenAI over SSE\", base_url=\"https://" + HOST
                                        + "/v1\"," + " env_key=\"" + KEY.variable()
                                        + "\", wire_api=\"responses\", supports_websockets=false}",
                                "Say hello"))
                .toArray(String[]::new));

        List<LlmStub.Request> seen = RealAgents.assertSession(run, o, stub, before, HOSTS, KEY);
        RealAgents.assertPlaceholder(o, KEY);
        assertTrue(
                seen.stream().noneMatch(LlmStub.Request::websocket),
                () -> RealAgents.paths(seen).toString());
        assertTrue(
                seen.stream()
                        .anyMatch(r -> r.method().equals("POST") && r.path().equals("/v1/responses")),
                () -> "no POST: " + RealAgents.paths(seen));
    }

    private AgentjailRun run(RealAgents.Installed codex) {
        return AgentjailRun.in(dir)
                .env("PATH", codex.launcherPath())
                .env(KEY.variable(), KEY.real())
                .policy("version: 1\n" + stub.routes(HOSTS));
    }
}
