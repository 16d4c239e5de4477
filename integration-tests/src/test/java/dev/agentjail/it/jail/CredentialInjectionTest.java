package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Prerequisites;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credential injection end to end: the host holds the real API key; inside the jail its variable holds a per-session
 * placeholder; curl sends the placeholder in the rule's header to the rule's host over intercepted TLS, and the
 * upstream receives the real key there, and nowhere else. The real key never appears in the jail's output, the
 * launcher's output or the audit log.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CredentialInjectionTest {
    static final String VARIABLE = "EXAMPLE_API_KEY";
    static final String REAL = "real-example-key-5f1c0e2a9b7d4c3e8a6f";
    static final String PLACEHOLDER = "agentjail-placeholder-[0-9a-f]{32,}";

    static InterceptedUpstream upstream;

    @TempDir
    static Path tlsDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startUpstream() throws Exception {
        upstream = InterceptedUpstream.start(tlsDir);
        upstream.server()
                .stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("ok")));
    }

    @AfterAll
    static void stopUpstream() {
        if (upstream != null) {
            upstream.close();
        }
    }

    @Test
    void theJailSeesAPlaceholderAndTheDesignatedHeaderCarriesTheRealValueUpstream() {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Prerequisites.CURL);
        AgentjailRun.Outcome first = run("/first");
        AgentjailRun.Outcome second = run("/second");

        String placeholder = first.probe("placeholder");
        assertAll(
                () -> assertTrue(placeholder.matches(PLACEHOLDER), first::describe),
                () -> assertEquals("ok 200", first.probe("curl"), first::describe),
                () -> assertNotEquals(
                        placeholder,
                        second.probe("placeholder"),
                        "another project (and user) has its own placeholder"));

        List<LoggedRequest> received = upstream.received("/first");
        assertEquals(1, received.size(), first::describe);
        assertEquals(
                REAL,
                received.get(0).getHeader("x-api-key"),
                "the upstream must receive the real value in the rule's header (the proxy swaps the placeholder)");
        for (AgentjailRun.Outcome o : List.of(first, second)) {
            assertFalse(o.out().contains(REAL), "the real value reached the jail: " + o.describe());
            assertFalse(o.err().contains(REAL), "the launcher printed the real value: " + o.describe());
            assertFalse(
                    new String(AuditLines.bytes(o.auditLog()), StandardCharsets.UTF_8).contains(REAL),
                    "the audit log holds the real value");
        }
    }

    @Test
    void aProjectsPlaceholderStaysTheSameAcrossSessionsSoAnAgentThatRemembersItKeepsWorking() {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).env(VARIABLE, REAL).policy(policy());
        String script = "echo \"placeholder=$" + VARIABLE + "\"";

        AgentjailRun.Outcome first = run.bash(script);
        AgentjailRun.Outcome second = run.bash(script);

        assertEquals(0, first.exitCode(), first::describe);
        assertTrue(first.probe("placeholder").matches(PLACEHOLDER), first::describe);
        assertEquals(first.probe("placeholder"), second.probe("placeholder"), second::describe);
        assertEquals(
                REAL.length(),
                Math.min(REAL.length(), first.probe("placeholder").length()));
    }

    @Test
    void thePlaceholderInAnyOtherHeaderNeverReachesTheUpstreamAndNorDoesTheRealValue() {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Prerequisites.CURL);
        AgentjailRun run = AgentjailRun.in(dir).env(VARIABLE, REAL).policy(policy());
        AgentjailRun.Outcome o = run.bash("""
                echo "placeholder=$%1$s"
                curl -q -sS -m 20 -o /dev/null -H "x-other: $%1$s" %2$s/elsewhere
                exit 0
                """.formatted(VARIABLE, upstream.origin()));
        String placeholder = o.probe("placeholder");
        for (LoggedRequest r : upstream.received("/elsewhere")) {
            String other = r.getHeader("x-other");
            assertFalse(REAL.equals(other), "the real value went out in another header");
            assertFalse(
                    other != null && other.contains(placeholder),
                    "the placeholder went out unredacted in another header: " + other);
        }
    }

    private AgentjailRun.Outcome run(String path) {
        AgentjailRun run = AgentjailRun.in(dir.resolve(path.substring(1)))
                .env(VARIABLE, REAL)
                .policy(policy());
        AgentjailRun.Outcome o = run.bash("""
                echo "placeholder=$%1$s"
                echo "curl=$(curl -q -sS -m 20 -w ' %%{http_code}' -H "x-api-key: $%1$s" %2$s%3$s)"
                """.formatted(VARIABLE, upstream.origin(), path));
        assertEquals(0, o.exitCode(), o::describe);
        return o;
    }

    private static String policy() {
        return upstream.policy("""
                credentials:
                  - env: %s
                    hosts: ["%s:%d"]
                    header: x-api-key
                """.formatted(VARIABLE, InterceptedUpstream.HOST, upstream.httpsPort()));
    }
}
