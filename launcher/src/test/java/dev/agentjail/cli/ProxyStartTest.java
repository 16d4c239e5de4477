package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.FileAuditLog;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.net.SystemResolver;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The session's proxy, started on its own thread: what waiting for it and closing it give, started or failed. */
class ProxyStartTest {
    @TempDir
    Path dir;

    private FileAuditLog audit;
    private ExecutorService dns;

    @BeforeEach
    void open() throws IOException {
        audit = FileAuditLog.open(dir.resolve("audit.jsonl"), FileAuditLog.Options.defaults());
        dns = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void close() {
        audit.close();
        dns.shutdownNow();
    }

    private ProxyConfig config() {
        return new ProxyConfig(
                NetworkPolicy.none(),
                "s1",
                audit,
                new SystemResolver(dns),
                HttpLimits.defaults(),
                Timeouts.defaults(),
                Clock.systemUTC(),
                1);
    }

    @Test
    void awaitGivesAProxyListeningForTheHandOffAndCloseStopsIt() throws Exception {
        Path socket = dir.resolve("handoff.sock");
        ProxyStart start = ProxyStart.begin(config(), socket, 3128);
        ProxyStart.Running running = start.await();
        assertTrue(running.handoff().socketPath().endsWith("handoff.sock"));
        try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            client.connect(UnixDomainSocketAddress.of(socket));
        }
        start.close();
        assertFalse(Files.exists(socket), "closing removes the hand-off socket");
        assertThrows(IOException.class, () -> {
            try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                client.connect(UnixDomainSocketAddress.of(socket));
            }
        });
    }

    @Test
    void aFailedStartIsThrownByAwaitAndLeavesNothingToClose() throws Exception {
        // The hand-off socket's directory does not exist: the listener cannot bind.
        ProxyStart start = ProxyStart.begin(config(), dir.resolve("missing/handoff.sock"), 3128);
        assertThrows(Exception.class, start::await);
        start.close();
        start.close();
    }

    @Test
    void closingWithoutWaitingStillStopsTheProxy() throws Exception {
        Path socket = dir.resolve("handoff.sock");
        ProxyStart start = ProxyStart.begin(config(), socket, 3128);
        // The session failed before it waited: close waits for the start, then stops what it started.
        start.close();
        assertFalse(Files.exists(socket), "closing removes the hand-off socket");
    }
}
