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
 * Gemini CLI, the real CLI at the version pinned in {@code .ci/agents}, in the jail under its built-in preset, its
 * default API host {@code generativelanguage.googleapis.com} routed to {@link LlmStub}: {@code gemini -p} with an API
 * key ({@code streamGenerateContent} over SSE).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GeminiCliAgentTest {
    static final String PACKAGE = "@google/gemini-cli";
    static final String HOST = "generativelanguage.googleapis.com";
    static final RealAgents.Key KEY =
            new RealAgents.Key("GEMINI_API_KEY", "AIzaSyRealGeminiKey-5c7e9a1b3d", "x-goog-api-key", "");

    static LlmStub stub;

    @TempDir
    static Path stubDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startStub() throws Exception {
        stub = LlmStub.start(stubDir, "stub-answer-gemini-" + Long.toHexString(System.nanoTime()));
    }

    @AfterAll
    static void stopStub() {
        if (stub != null) {
            stub.close();
        }
    }

    @Test
    void printModeAnswersFromTheStubWithTheRealKeyInjected() throws Exception {
        RealAgents.Installed gemini = RealAgents.require(PACKAGE, "gemini");
        AgentjailRun run = AgentjailRun.in(dir)
                .env("PATH", gemini.launcherPath())
                .env(KEY.variable(), KEY.real())
                .policy("version: 1\n" + stub.routes(List.of(HOST)))
                .options("--preset", "gemini-cli");
        // Gemini CLI runs headless only in a folder the user trusted; this user trusted the project before.
        java.nio.file.Files.createDirectories(run.home().resolve(".gemini"));
        java.nio.file.Files.writeString(
                run.home().resolve(".gemini/trustedFolders.json"), "{\"" + run.project() + "\": \"TRUST_FOLDER\"}\n");
        int before = stub.requests().size();

        AgentjailRun.Outcome o =
                run.run(RealAgents.probed(List.of(KEY.variable()), List.of("gemini", "-p", "Say hello from the jail"))
                        .toArray(String[]::new));

        List<LlmStub.Request> seen = RealAgents.assertSession(run, o, stub, before, List.of(HOST), KEY);
        RealAgents.assertPlaceholder(o, KEY);
        assertTrue(
                seen.stream().anyMatch(r -> r.path().contains(":streamGenerateContent")),
                () -> RealAgents.paths(seen).toString());
    }
}
