package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.ProxyProcess;
import dev.agentjail.it.support.RawHttp;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} durability: the {@code agentjail proxy} command runs as its own JVM with fsync group commit set to an
 * hour, so only the write that happens before each response can save a record; after SIGKILL the log holds one
 * complete record for every request whose response the client saw, and no torn line.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KillDurabilityTest {
    private static final int ALLOWED = 30;
    private static final int DENIED = 10;
    private static final Duration SOCKET_WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().dynamicPort())
            .build();

    @TempDir
    Path dir;

    @Test
    void everyAnsweredRequestHasACompleteRecordAfterKill9() throws Exception {
        upstream.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("fine")));
        Path policy = Files.writeString(dir.resolve("policy.yaml"), Policies.upstreamOn(upstream.getPort()));
        Path log = dir.resolve("logs/audit.jsonl");
        List<String> sent = new ArrayList<>();
        int exit;
        try (ProxyProcess proxy = ProxyProcess.start(
                "--policy", policy.toString(), "--audit-log", log.toString(), "--audit-sync", "1h")) {
            try (HttpClient client = JdkClients.viaProxy(proxy.port())) {
                for (int i = 0; i < ALLOWED + DENIED; i++) {
                    boolean deny = i % 4 == 3; // 10 of the 40
                    String path = (deny ? "deny" : "allow") + "-" + i;
                    String host = deny ? Policies.DENIED : "upstream.test:" + upstream.getPort();
                    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + host + "/" + path))
                            .timeout(Duration.ofSeconds(20));
                    if (i % 2 == 0) {
                        request.POST(HttpRequest.BodyPublishers.ofString("payload " + i));
                    }
                    HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
                    assertEquals(deny ? 403 : 200, response.statusCode(), path);
                    sent.add(path);
                }
            }
            exit = proxy.killHard();
        }
        assertEquals(137, exit, "the proxy died of SIGKILL (128 + 9), so no shutdown hook flushed anything");

        // AuditLines.read fails on a partial last line.
        List<JsonNode> all = AuditLines.read(log);
        List<JsonNode> records = AuditLines.requests(all);
        assertEquals(all.size(), records.size(), () -> "plain HTTP leaves request records only: " + all);
        assertEquals(sent.size(), records.size(), "one complete record per answered request");
        assertEquals(Map.of("allow", (long) ALLOWED, "deny", (long) DENIED), AuditLines.countBy(records, "decision"));
        List<String> recordedPaths =
                records.stream().map(r -> r.path("path").asText().substring(1)).toList();
        assertEquals(sent, recordedPaths, "the records are in request order, one per request");
        String session = records.get(0).path("session").asText();
        assertTrue(session.matches("[0-9a-f]{16}"), session);
        for (JsonNode r : records) {
            assertEquals(session, r.path("session").asText());
            assertTrue(
                    r.path("ts").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"), r::toString);
        }
    }

    @Test
    void anAnsweredConnectHasItsRecordAfterKill9EvenWhileItsTunnelIsOpen() throws Exception {
        // A tunnelled host: its bytes are relayed unopened, once the handshake names it. A stand-in server reads the
        // client's ClientHello and answers with a TLS 1.3 ServerHello (the tunnel follows the handshake that far).
        byte[] hello = dev.agentjail.proxy.testing.ClientHellos.of("upstream.test");
        byte[] serverHello = dev.agentjail.proxy.testing.ClientHellos.serverHello(false, 0x0304);
        java.util.concurrent.CompletableFuture<byte[]> arrived = new java.util.concurrent.CompletableFuture<>();
        try (java.net.ServerSocket echo = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = echo.accept()) {
                    arrived.complete(s.getInputStream().readNBytes(hello.length));
                    s.getOutputStream().write(serverHello);
                    s.getOutputStream().flush();
                    s.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
                } catch (java.io.IOException e) {
                    // The proxy was killed: the tunnel's end.
                }
            });
            int port = echo.getLocalPort();
            Path policy = Files.writeString(
                    dir.resolve("policy.yaml"),
                    Policies.upstreamOn(port) + "  tunnel: [\"upstream.test:" + port + "\"]\n");
            Path log = dir.resolve("audit.jsonl");
            String authority = "upstream.test:" + port;
            int exit;
            try (ProxyProcess proxy = ProxyProcess.start(
                            "--policy", policy.toString(), "--audit-log", log.toString(), "--audit-sync", "1h");
                    Socket client = new Socket("127.0.0.1", proxy.port())) {
                client.setSoTimeout((int) SOCKET_WAIT.toMillis());
                OutputStream out = client.getOutputStream();
                InputStream in = client.getInputStream();
                out.write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertEquals(200, RawHttp.read(in).status(), "the CONNECT was answered");
                out.write(hello);
                out.flush();
                assertEquals(
                        java.util.HexFormat.of().formatHex(serverHello),
                        java.util.HexFormat.of().formatHex(in.readNBytes(serverHello.length)),
                        "the tunnel relays the server's answer");
                assertEquals(
                        java.util.HexFormat.of().formatHex(hello),
                        java.util.HexFormat.of().formatHex(arrived.get(10, java.util.concurrent.TimeUnit.SECONDS)),
                        "and the client's hello, unchanged");
                exit = proxy.killHard();
            }
            assertDurable(exit, log);
        }
    }

    private static void assertDurable(int exit, Path log) throws Exception {
        assertEquals(137, exit);
        List<JsonNode> records = AuditLines.read(log);
        List<JsonNode> connects = AuditLines.requests(records).stream()
                .filter(r -> r.path("method").asText().equals("CONNECT"))
                .toList();
        assertEquals(
                1,
                connects.size(),
                () -> "the request record of an allowed CONNECT is written before its 200, so it survives kill -9 even "
                        + "while the tunnel is open; records: " + records);
        JsonNode connect = connects.get(0);
        assertEquals("allow", connect.path("decision").asText(), connect::toString);
        assertEquals(200, connect.path("status").asInt(), connect::toString);
        assertEquals("tunnel", connect.path("tls").asText(), connect::toString);
        assertEquals(0, connect.path("bytes_out").asLong(), connect::toString);
        assertEquals(0, connect.path("bytes_in").asLong(), connect::toString);
    }
}
