package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * A clean stop (what {@code agentjail proxy} does on Ctrl-C or SIGTERM: close the server, then the audit log) leaves
 * one record for every tunnel that was still open. Repeated, because whether the close reaches the tunnel's handlers
 * depends on event-loop timing.
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
        List<Long> recordedPerRound = new ArrayList<>();
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
            recordedPerRound.add(records.stream()
                    .filter(r -> r.path("method").asText().equals("CONNECT")
                            && r.path("tls").asText().equals("tunnel"))
                    .count());
        }
        assertEquals(
                Collections.nCopies(ROUNDS, (long) TUNNELS),
                recordedPerRound,
                "PROXY BUG: tunnel records written per shutdown round; ProxyServer.close() shuts the event loops down "
                        + "without first closing the accepted connections, and in some rounds TunnelRelay.channelInactive "
                        + "(hence TunnelSwitch.Tunnel.closed) never runs, so every tunnel open at Ctrl-C/SIGTERM "
                        + "goes unrecorded");
    }
}
