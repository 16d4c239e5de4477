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
 * opencode, the real CLI at the version pinned in {@code .ci/agents}, in the jail under its built-in preset, with
 * Anthropic's default API host {@code api.anthropic.com} routed to {@link LlmStub}: {@code opencode run} with an API
 * key (Messages API, SSE), started by name as a user does.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class OpencodeAgentTest {
    static final String PACKAGE = "opencode-ai";
    static final String HOST = "api.anthropic.com";
    static final RealAgents.Key KEY =
            new RealAgents.Key("ANTHROPIC_API_KEY", "sk-ant-api03-real-opencode-key-8f2a4c6e0d", "x-api-key", "");

    static LlmStub stub;

    @TempDir
    static Path stubDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startStub() throws Exception {
        stub = LlmStub.start(stubDir, "stub-answer-opencode-" + Long.toHexString(System.nanoTime()));
    }

    @AfterAll
    static void stopStub() {
        if (stub != null) {
            stub.close();
        }
    }

    @Test
    void runAnswersFromTheStubWithTheRealKeyInjected() {
        RealAgents.Installed opencode = RealAgents.require(PACKAGE, "opencode");
        AgentjailRun run = AgentjailRun.in(dir)
                .env("PATH", opencode.launcherPath())
                .env(KEY.variable(), KEY.real())
                .policy("version: 1\n" + stub.routes(List.of(HOST)));
        int before = stub.requests().size();

        AgentjailRun.Outcome o = run.withoutSeparator()
                .run("opencode", "run", "--model", "anthropic/claude-haiku-4-5", "Say hello from the jail");

        List<LlmStub.Request> seen = RealAgents.assertSession(run, o, stub, before, List.of(HOST), KEY);
        // A project's placeholder is the same in every session: what a shell under the same preset sees is what
        // opencode saw.
        AgentjailRun.Outcome probe = AgentjailRun.in(dir)
                .env("PATH", opencode.launcherPath())
                .env(KEY.variable(), KEY.real())
                .policy("version: 1\n" + stub.routes(List.of(HOST)))
                .auditLog(dir.resolve("probe").resolve("audit.jsonl"))
                .options("--preset", "opencode")
                .run(RealAgents.probed(List.of(KEY.variable()), List.of("true")).toArray(String[]::new));
        RealAgents.assertPlaceholder(probe, KEY);
        assertTrue(
                seen.stream().anyMatch(r -> r.path().equals("/v1/messages")),
                () -> RealAgents.paths(seen).toString());
    }
}
