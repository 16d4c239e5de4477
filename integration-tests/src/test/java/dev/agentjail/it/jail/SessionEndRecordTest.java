package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The session-end record is the session's last, written once the proxy has closed every connection the jail left
 * open, so its request count is the log's: also when the agent exits while its requests are still under way.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SessionEndRecordTest {
    @RegisterExtension
    static WireMockExtension slow = WireMockExtension.newInstance()
            .options(wireMockConfig().bindAddress("127.0.0.1").dynamicPort())
            .build();

    @TempDir
    Path dir;

    @BeforeEach
    void setUp() {
        AgentjailRun.requireBwrap();
        slow.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withFixedDelay(5_000)));
    }

    @Test
    void theEndRecordComesAfterTheRequestsTheAgentLeftUnderWay() {
        int port = slow.getPort();
        AgentjailRun.Outcome o =
                AgentjailRun.in(dir).policy("""
                version: 1
                network:
                  allow: ["slow.test:%d"]
                  resolve: {slow.test: 127.0.0.1}
                """.formatted(port)).bash("""
                for i in 1 2 3 4; do curl -q -s -m 30 -o /dev/null http://slow.test:%d/$i & done
                curl -q -s -m 5 -o /dev/null http://denied.test/
                sleep 1
                echo "left=$(jobs -r | wc -l)"
                """.formatted(port));

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("4", o.probe("left").strip(), "the slow requests were still under way: " + o.describe());
        List<JsonNode> audit = o.audit();
        JsonNode last = audit.get(audit.size() - 1);
        assertEquals(AuditRecord.KIND_SESSION_END, last.path("kind").asText(), audit::toString);
        long requests = audit.stream()
                .filter(r -> AuditRecord.KIND_REQUEST.equals(r.path("kind").asText()))
                .count();
        assertEquals(5, requests, audit::toString);
        assertEquals(requests, last.path("requests").asLong(), last::toString);
        assertTrue(o.err().contains("5 requests"), o::describe);
    }
}
