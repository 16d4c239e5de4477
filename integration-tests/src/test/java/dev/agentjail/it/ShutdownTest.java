package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.RawHttp;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.FileAuditLog;
import dev.agentjail.proxy.testing.ProxyFixture;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A clean stop (what {@code agentjail proxy} does on Ctrl-C or SIGTERM: close the server, then the audit log) leaves,
 * for every tunnel that was still open, its request record (written before the 200) and a {@code tunnel-close} record.
 * Repeated, because whether the close reaches the tunnel's handlers depends on event-loop timing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShutdownTest {
    private static final int ROUNDS = 20;
    private static final int TUNNELS = 4;

    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().dynamicPort())
            .build();

    @TempDir
    Path dir;

    @Test
    void stoppingTheProxyRecordsEveryTunnelThatWasStillOpen() throws Exception {
        int port = upstream.getPort();
        String authority = "upstream.test:" + port;
        List<String> perRound = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            Path log = dir.resolve("audit-" + round + ".jsonl");
            FileAuditLog audit = FileAuditLog.open(log, Duration.ofSeconds(1));
            ProxyFixture proxy = ProxyFixture.start(Policies.upstreamOn(port), audit, null, Timeouts.defaults());
            List<Socket> tunnels = new ArrayList<>();
            try {
                for (int t = 0; t < TUNNELS; t++) {
                    Socket s = new Socket("127.0.0.1", proxy.port());
                    tunnels.add(s);
                    s.setSoTimeout(10_000);
                    OutputStream out = s.getOutputStream();
                    out.write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    assertEquals(200, RawHttp.read(s.getInputStream()).status());
                }
            } finally {
                // The order of the CLI's shutdown hook.
                proxy.close();
                audit.close();
                for (Socket s : tunnels) {
                    s.close();
                }
            }
            List<JsonNode> records = AuditLines.read(log);
            List<JsonNode> requests = tunnels(AuditLines.requests(records));
            List<JsonNode> closes = tunnels(AuditLines.ofKind(records, "tunnel-close"));
            perRound.add(requests.size() + " request, " + closes.size() + " tunnel-close");
            assertEquals(
                    clients(requests),
                    clients(closes),
                    () -> "each tunnel-close record belongs to one recorded CONNECT; records: " + records);
            for (JsonNode close : closes) {
                assertEquals("allow", close.path("decision").asText(), close::toString);
                assertEquals(200, close.path("status").asInt(), close::toString);
                assertTrue(close.has("duration_ms"), close::toString);
            }
        }
        assertEquals(
                Collections.nCopies(ROUNDS, TUNNELS + " request, " + TUNNELS + " tunnel-close"),
                perRound,
                "CONNECT records per shutdown round: every allowed CONNECT has its request record (written before its "
                        + "200), and ProxyServer.close() closes the accepted connections before stopping its event "
                        + "loops, so every tunnel still open writes its tunnel-close record");
    }

    private static List<JsonNode> tunnels(List<JsonNode> records) {
        return records.stream()
                .filter(r -> r.path("method").asText().equals("CONNECT")
                        && r.path("tls").asText().equals("tunnel"))
                .toList();
    }

    private static List<String> clients(List<JsonNode> records) {
        return records.stream().map(r -> r.path("client").asText()).sorted().toList();
    }
}
