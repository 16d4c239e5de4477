package dev.agentjail.it;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.it.support.ProxyProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code --unix-socket PATH} listener of {@code agentjail proxy} (the one the jail uses): absolute-form requests
 * sent over the Unix socket are decided, forwarded and recorded exactly like those on TCP.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnixSocketListenerTest {
    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().dynamicPort())
            .build();

    @TempDir
    Path dir;

    @Test
    void absoluteFormRequestsOverTheUnixSocketAreForwardedDeniedAndRecorded() throws Exception {
        upstream.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("via unix socket")));
        int port = upstream.getPort();
        Path socket = dir.resolve("proxy.sock");
        Path log = dir.resolve("audit.jsonl");
        Path policy = Files.writeString(dir.resolve("policy.yaml"), Policies.upstreamOn(port));
        try (ProxyProcess proxy = ProxyProcess.start(
                "--policy", policy.toString(), "--audit-log", log.toString(), "--unix-socket", socket.toString())) {
            assertTrue(proxy.banner().contains(" and unix:" + socket), proxy.banner());

            String allowed = exchange(
                    socket,
                    "POST http://upstream.test:" + port + "/over/unix?x=1 HTTP/1.1\r\n"
                            + "Host: upstream.test:" + port + "\r\n"
                            + "Content-Length: 5\r\n"
                            + "Connection: close\r\n\r\n"
                            + "hello");
            assertTrue(allowed.startsWith("HTTP/1.1 200 "), allowed);
            assertTrue(allowed.contains("via unix socket"), allowed);

            String denied = exchange(
                    socket,
                    "GET http://" + Policies.DENIED + "/nope HTTP/1.1\r\nHost: " + Policies.DENIED
                            + "\r\nConnection: close\r\n\r\n");
            assertTrue(denied.startsWith("HTTP/1.1 403 "), denied);
            assertTrue(
                    denied.toLowerCase(Locale.ROOT).contains("\r\nx-agentjail-reason: not-in-allowlist\r\n"), denied);

            List<LoggedRequest> got = upstream.getAllServeEvents().stream()
                    .map(e -> e.getRequest())
                    .toList();
            assertEquals(1, got.size());
            assertEquals("/over/unix?x=1", got.get(0).getUrl());
            assertEquals("hello", got.get(0).getBodyAsString());
            assertEquals("upstream.test:" + port, got.get(0).getHeader("Host"));

            List<JsonNode> records = AuditLines.requests(AuditLines.read(log));
            assertEquals(2, records.size(), records::toString);
            assertEquals("allow", records.get(0).path("decision").asText());
            assertEquals("/over/unix", records.get(0).path("path").asText());
            assertEquals(5, records.get(0).path("bytes_out").asInt());
            assertEquals("deny", records.get(1).path("decision").asText());
            assertEquals("not-in-allowlist", records.get(1).path("reason").asText());
        }
    }

    @Test
    void curlOverTheUnixSocketSendsOriginFormAndIsToldToUseAbsoluteForm() throws Exception {
        // curl ignores -x when --unix-socket is given and sends origin-form; the proxy must refuse, not guess.
        Path curl = Prerequisites.require(Prerequisites.CURL);
        Path socket = dir.resolve("p.sock");
        Path policy = Files.writeString(dir.resolve("policy.yaml"), Policies.upstreamOn(upstream.getPort()));
        Path log = dir.resolve("audit.jsonl");
        try (ProxyProcess proxy = ProxyProcess.start(
                "--policy", policy.toString(), "--audit-log", log.toString(), "--unix-socket", socket.toString())) {
            assertTrue(proxy.banner().contains("unix:" + socket), proxy.banner());
            Command.Result r = Command.run(
                    Duration.ofSeconds(30),
                    List.of(
                            curl.toString(),
                            "-q",
                            "-sS",
                            "-i",
                            "--max-time",
                            "20",
                            "--unix-socket",
                            socket.toString(),
                            "http://upstream.test:" + upstream.getPort() + "/x"));
            assertEquals(0, r.exitCode(), r::describe);
            assertTrue(r.out().startsWith("HTTP/1.1 400 "), r.out());
            assertTrue(r.out().toLowerCase(Locale.ROOT).contains("x-agentjail-reason: bad-target"), r.out());
            assertEquals(0, upstream.getAllServeEvents().size());
            List<JsonNode> records = AuditLines.requests(AuditLines.read(log));
            assertEquals(1, records.size(), records::toString);
            assertEquals("error", records.get(0).path("decision").asText());
            assertEquals("bad-target", records.get(0).path("reason").asText());
            assertEquals(400, records.get(0).path("status").asInt());
        }
    }

    /** Writes {@code request} to the Unix socket and reads until the proxy closes it, within ten seconds. */
    private static String exchange(Path socket, String request) throws Exception {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try (channel) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            ByteBuffer out = ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII));
            while (out.hasRemaining()) {
                channel.write(out);
            }
            CompletableFuture<String> response = CompletableFuture.supplyAsync(() -> readToEnd(channel));
            try {
                return response.get(10, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                fail("the proxy did not answer and close within 10 s on the Unix socket");
                throw e;
            }
        }
    }

    private static String readToEnd(SocketChannel channel) {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        ByteBuffer buf = ByteBuffer.allocate(8192);
        try {
            while (channel.read(buf) >= 0) {
                received.write(buf.array(), 0, buf.position());
                buf.clear();
            }
        } catch (IOException e) {
            // Closed by the test's timeout; what arrived is returned.
        }
        return received.toString(StandardCharsets.UTF_8);
    }
}
