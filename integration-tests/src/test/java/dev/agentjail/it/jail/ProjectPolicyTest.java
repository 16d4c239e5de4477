package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without {@code --policy}, the project's {@code .agentjail.yaml} applies and the agent cannot rewrite it; without
 * either, the built-in policy allows no network at all, so the proxy answers every request with its 403.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ProjectPolicyTest {
    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().bindAddress("127.0.0.1").dynamicPort())
            .build();

    @TempDir
    Path dir;

    @BeforeEach
    void setUp() {
        AgentjailRun.requireBwrap();
        upstream.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("ok")));
    }

    @Test
    void theProjectsPolicyFileAppliesAndIsReadOnlyInside() throws IOException {
        int port = upstream.getPort();
        AgentjailRun run = AgentjailRun.in(dir);
        String policy = """
                version: 1
                network:
                  allow: ["upstream.test:%d"]
                  resolve: {upstream.test: 127.0.0.1}
                """.formatted(port);
        Path file = Files.writeString(run.project().resolve(".agentjail.yaml"), policy);
        run.trustProject(); // the address pin reaches the host's loopback: a project needs the user's trust for it

        AgentjailRun.Outcome o = run.bash("""
                echo "http=$(curl -q -sS -m 20 -o /dev/null -w '%%{http_code}' http://upstream.test:%d/project-policy)"
                printf 'network:\\n  allow: [evil.test]\\n' >> .agentjail.yaml; echo "rewrite=$?"
                """.formatted(port));

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("200", o.probe("http"), o::describe),
                () -> assertNotEquals("0", o.probe("rewrite"), "the agent rewrote the project's policy"));
        assertEquals(policy, Files.readString(file));
        assertEquals(
                file.toRealPath().toString(),
                o.only(AuditRecord.KIND_SESSION_START).path("policy_source").asText());
    }

    @Test
    void withoutAnyPolicyNothingIsAllowed() {
        int port = upstream.getPort();
        AgentjailRun.Outcome o = AgentjailRun.in(dir).bash("""
                curl -q -sS -m 20 -D /tmp/h -o /dev/null http://upstream.test:%d/deny-all
                echo "status=$(head -1 /tmp/h | cut -d' ' -f2)"
                echo "reason=$(grep -i '^%s:' /tmp/h | cut -d: -f2- | tr -d ' \\r')"
                """.formatted(port, ProxyReasons.HEADER));

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("403", o.probe("status"), o::describe);
        assertEquals(Reasons.NO_NETWORK, o.probe("reason"), o::describe);
        assertEquals(List.of(), upstream.getAllServeEvents(), "requests that reached the upstream");
        assertEquals(1, o.only(AuditRecord.KIND_SESSION_END).path("denials").asInt());
    }
}
