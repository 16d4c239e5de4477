package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.ProxyProcess;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code agentjail proxy} command as a user runs it, in its own JVM: help, exit code 2 with {@code FILE:LINE: KEY}
 * for a malformed policy (and nothing started), the announced listen address, and a clean stop on SIGTERM (the
 * shutdown hook Ctrl-C also runs) with the log complete. Open tunnels at shutdown: see {@link ShutdownTest}.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ProxyCliTest {
    private static final Duration CLI_LIMIT = Duration.ofSeconds(30);

    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().dynamicPort())
            .build();

    @TempDir
    Path dir;

    @Test
    void helpExitsZeroAndDescribesTheOptions() {
        Command.Result r = ProxyProcess.runCli(CLI_LIMIT, "proxy", "--help");
        assertEquals(0, r.exitCode(), r::describe);
        for (String option : List.of("--policy", "--listen", "--unix-socket", "--audit-log")) {
            assertTrue(r.out().contains(option), () -> option + " missing from: " + r.out());
        }
    }

    @Test
    void missingPolicyOptionIsAUsageError() {
        Command.Result r = ProxyProcess.runCli(CLI_LIMIT, "proxy", "--listen", "127.0.0.1:0");
        assertTrue(r.stderr().contains("Missing required option: '--policy=FILE'"), r::describe);
        assertEquals(
                2,
                r.exitCode(),
                () -> "a usage error (picocli's ParameterException) exits with ExitCodes.USAGE (2); " + r.describe());
    }

    @Test
    void malformedPolicyExitsTwoNamingFileLineAndKeyAndStartsNothing() throws IOException {
        Path policy = Files.writeString(dir.resolve("bad-policy.yaml"), """
                version: 1
                network:
                  allow: ["*"]
                """);
        Path log = dir.resolve("audit.jsonl");
        int port = freePort();

        Command.Result r = ProxyProcess.runCli(
                CLI_LIMIT,
                "proxy",
                "--policy",
                policy.toString(),
                "--listen",
                "127.0.0.1:" + port,
                "--audit-log",
                log.toString());

        assertEquals(2, r.exitCode(), r::describe);
        assertTrue(
                r.stderr().contains(policy + ":3: network.allow[0]"), () -> "FILE:LINE: KEY expected: " + r.describe());
        assertFalse(r.out().contains("listening"), r::describe);
        assertFalse(Files.exists(log), "no audit log was opened");
        assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), port).close());
    }

    @Test
    void sigtermStopsCleanlyWithTheAuditLogComplete() throws Exception {
        upstream.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("ok")));
        int port = upstream.getPort();
        Path policy = Files.writeString(dir.resolve("policy.yaml"), Policies.upstreamOn(port));
        Path log = dir.resolve("audit.jsonl");
        int exit;
        try (ProxyProcess proxy = ProxyProcess.start("--policy", policy.toString(), "--audit-log", log.toString())) {
            assertTrue(
                    proxy.banner().contains("(policy " + policy + ", audit log " + log + ", session "), proxy.banner());
            try (HttpClient client = JdkClients.viaProxy(proxy.port())) {
                HttpResponse<String> response = client.send(
                        HttpRequest.newBuilder(URI.create("http://upstream.test:" + port + "/before-stop"))
                                .timeout(Duration.ofSeconds(20))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, response.statusCode());
            }
            proxy.process().destroy(); // SIGTERM
            assertTrue(proxy.process().waitFor(15, TimeUnit.SECONDS), "the proxy did not stop within 15 s");
            exit = proxy.process().exitValue();
            assertFalse(proxy.stderr().contains("Exception"), proxy::stderr);
        }
        assertEquals(143, exit, "terminated by SIGTERM (128 + 15) through the shutdown hook");
        List<JsonNode> records = AuditLines.requests(AuditLines.read(log)); // read fails on a torn last line
        assertEquals(1, records.size(), records::toString);
        assertEquals("/before-stop", records.get(0).path("path").asText());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
