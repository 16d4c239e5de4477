package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.cli.ExitCodes;
import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.ProxyReasons;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The policy layers in a real jail: a team policy (named by AGENTJAIL_TEAM_POLICY) denies what a project allows, a
 * locked key stops the session before anything starts, and the policy's pre-start commands run inside the jail
 * before the agent.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PolicyLayersTest {
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

    private Path team(String yaml) throws IOException {
        Path teamDir = Files.createDirectories(dir.resolve("team"));
        return Files.writeString(teamDir.resolve("base.yaml"), yaml);
    }

    @Test
    void aProjectCannotAllowWhatTheTeamDenies() throws IOException {
        int port = upstream.getPort();
        Path team = team("""
                version: 1
                network:
                  deny: [secret.test]
                """);
        AgentjailRun run = AgentjailRun.in(dir)
                .env("AGENTJAIL_TEAM_POLICY", team.getParent().toString());
        Files.writeString(run.project().resolve(".agentjail.yaml"), """
                version: 1
                network:
                  allow: ["ok.test:%d", "secret.test:%d"]
                  resolve: {ok.test: 127.0.0.1, secret.test: 127.0.0.1}
                """.formatted(port, port));
        run.trustProject(); // the address pins reach the host's loopback: a project needs the user's trust for them

        AgentjailRun.Outcome o = run.bash("""
                echo "ok=$(curl -q -sS -m 20 -o /dev/null -w '%%{http_code}' http://ok.test:%d/a)"
                curl -q -sS -m 20 -D /tmp/h -o /dev/null http://secret.test:%d/b
                echo "secret=$(head -1 /tmp/h | cut -d' ' -f2)"
                echo "reason=$(grep -i '^%s:' /tmp/h | cut -d: -f2- | tr -d ' \\r')"
                """.formatted(port, port, ProxyReasons.HEADER));

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("200", o.probe("ok"), o::describe);
        assertEquals("403", o.probe("secret"), o::describe);
        assertEquals(Reasons.DENIED_BY_RULE, o.probe("reason"), o::describe);
        assertEquals(1, upstream.getAllServeEvents().size(), "only the allowed request reached the upstream");
    }

    @Test
    void aLockedKeyStopsTheSessionBeforeAnythingStarts() throws IOException {
        Path team = team("""
                version: 1
                network:
                  mode: enforce
                locked: [network.mode]
                """);
        AgentjailRun run = AgentjailRun.in(dir).env("AGENTJAIL_TEAM_POLICY", team.toString());
        Path project =
                Files.writeString(run.project().resolve(".agentjail.yaml"), "version: 1\nnetwork:\n  mode: report\n");

        AgentjailRun.Outcome o = run.bash("echo ran=yes");

        assertEquals(ExitCodes.USAGE, o.exitCode(), o::describe);
        assertFalse(o.out().contains("ran=yes"), o::describe);
        assertTrue(
                o.err().contains(project + ":3: network.mode: locked by the team policy (" + team + ":4)"),
                o::describe);
    }

    @Test
    void preStartCommandsRunInsideTheJailBeforeTheAgent() throws IOException {
        AgentjailRun run = AgentjailRun.in(dir);
        Files.writeString(run.project().resolve(".agentjail.yaml"), """
                version: 1
                jail:
                  pre_start: ["echo prepared > /tmp/marker", "hostname > /tmp/host"]
                """);
        // A command a project file runs in the jail widens it: refused until the user trusts the file.
        AgentjailRun.Outcome refused = run.bash("echo ran=yes");
        assertEquals(2, refused.exitCode(), refused::describe);
        assertTrue(refused.err().contains("jail.pre_start[0]: runs the command"), refused::describe);
        run.trustProject();

        AgentjailRun.Outcome o = run.bash("echo \"marker=$(cat /tmp/marker)\"; echo \"host=$(cat /tmp/host)\"");

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("prepared", o.probe("marker"), o::describe);
        assertEquals("agentjail", o.probe("host"), "the hook ran inside the jail, not on the host");
    }

    @Test
    void runningAnAgentByNamePicksItsPresetButNotAfterTheSeparator() throws IOException {
        AgentjailRun byName = AgentjailRun.in(dir.resolve("by-name")).withoutSeparator();
        Path claude = byName.project().resolve("claude");
        Files.writeString(claude, "#!/bin/sh\necho \"telemetry=${DISABLE_TELEMETRY:-unset}\"\n");
        claude.toFile().setExecutable(true);

        AgentjailRun.Outcome o = byName.run(claude.toString());

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("1", o.probe("telemetry"), "the claude-code preset's env.set applies");
        assertTrue(
                o.only(dev.agentjail.proxy.audit.AuditRecord.KIND_SESSION_START)
                        .path("policy_source")
                        .asText()
                        .contains("preset:claude-code"),
                o::describe);

        AgentjailRun separated = AgentjailRun.in(dir.resolve("separated"));
        Path other = separated.project().resolve("claude");
        Files.writeString(other, "#!/bin/sh\necho \"telemetry=${DISABLE_TELEMETRY:-unset}\"\n");
        other.toFile().setExecutable(true);
        AgentjailRun.Outcome plain = separated.run(other.toString());
        assertEquals(0, plain.exitCode(), plain::describe);
        assertEquals("unset", plain.probe("telemetry"), "after --, no preset is picked");
    }
}
