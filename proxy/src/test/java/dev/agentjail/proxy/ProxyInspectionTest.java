package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.CorpusProxy.WAIT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.redact.ContentCodings;
import dev.agentjail.proxy.testing.Compressed;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 17 over plain HTTP, real sockets end to end: the head is scanned to the last byte (header names too), a
 * compressed body goes out as the proxy's encoding of what it scanned, and one that does not decode completely goes
 * nowhere. The recorder says what actually arrived.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyInspectionTest {
    /** Synthetic canary in the real format; never a real key. */
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    private String start(String redaction) throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n" + redaction);
        return up;
    }

    // ---- point 10: header names ----

    @Test
    void aSecretAsAHeaderNameIsDroppedWithItsFieldAndCountedWithoutTheName() throws Exception {
        String up = start("");
        HttpClient client = HttpClient.newBuilder()
                .proxy(ProxySelector.of(proxy.address()))
                .version(HttpClient.Version.HTTP_1_1)
                .build();

        HttpResponse<String> response = client.send(
                HttpRequest.newBuilder(URI.create("http://" + up + "/v1"))
                        .header("X-" + PAT, "1")
                        .header("X-Kept", "yes")
                        .timeout(WAIT)
                        .build(),
                HttpResponse.BodyHandlers.ofString());

        assertEquals(200, response.statusCode());
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertFalse(got.head().contains(PAT.substring(4)), got.head());
        assertEquals(List.of("yes"), got.headers("X-Kept"));
        AuditRecord record = proxy.records().getFirst();
        assertEquals(List.of(new RedactionCount("github-pat", "header-name", 1)), record.redactions());
        assertFalse(record.toString().contains(PAT.substring(4)), record.toString());
    }

    @Test
    void inBlockModeASecretHeaderNameRefusesTheRequestBeforeAnythingIsDialled() throws Exception {
        String up = start("redaction:\n  action: block\n");
        try (RawClient c = RawClient.connect(proxy.address())) {
            c.send("GET http://" + up + "/ HTTP/1.1\r\nHost: " + up + "\r\nx-" + PAT + ": 1\r\n\r\n");
            RawResponse response = c.readResponse(WAIT);

            assertEquals(403, response.status());
            assertEquals(ProxyReasons.SECRET_BLOCKED, response.header(ProxyReasons.HEADER));
        }
        upstream.assertUntouched();
        assertEquals(ProxyReasons.SECRET_BLOCKED, proxy.records().getFirst().reason());
    }

    // ---- point 3: one reading of the body's text ----

    @Test
    void aBodyInACharsetTheScannerCannotReadGoesNowhere() throws Exception {
        String up = start("");
        byte[] body = ("{\"token\":\"" + PAT + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_16LE);
        try (RawClient c = RawClient.connect(proxy.address())) {
            byte[] head = ("POST http://" + up + "/v1 HTTP/1.1\r\nHost: " + up
                            + "\r\nContent-Type: application/json; charset=utf-16le\r\nContent-Length: "
                            + body.length + "\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
            // One write: the proxy refuses on the head and must not find the body still arriving as it closes.
            byte[] all = java.util.Arrays.copyOf(head, head.length + body.length);
            System.arraycopy(body, 0, all, head.length, body.length);
            c.send(all);
            RawResponse response = c.readResponse(WAIT);

            assertEquals(403, response.status());
            assertEquals(ProxyReasons.UNINSPECTABLE_BODY, response.header(ProxyReasons.HEADER));
        }
        upstream.assertUntouched();
        assertEquals(ProxyReasons.UNINSPECTABLE_BODY, proxy.records().getFirst().reason());
    }

    // ---- point 2: what was scanned is what is sent ----

    @Test
    void aCleanGzipBodyGoesOutAsTheProxysEncodingOfWhatItScanned() throws Exception {
        String up = start("");
        byte[] plain = "{\"q\":\"nothing secret here\"}".getBytes(StandardCharsets.UTF_8);
        // A member with a file name: GZIPOutputStream never writes one, so the client's bytes can be told apart.
        byte[] sent = gzipWithName(plain);

        RawResponse response = post(up, "x-gzip", sent);

        assertEquals(200, response.status());
        RecordingUpstream.RecordedRequest got = onlyRequest();
        byte[] received = got.body().getBytes(StandardCharsets.ISO_8859_1);
        assertNotEquals(new String(sent, StandardCharsets.ISO_8859_1), got.body(), "the client's bytes went out");
        assertArrayEquals(plain, ContentCodings.decode("gzip", received, ContentCodings.Limits.defaults()));
        assertEquals(List.of("gzip"), got.headers("Content-Encoding"));
        assertEquals(List.of(Integer.toString(received.length)), got.headers("Content-Length"));
    }

    @Test
    void contentEncodingIdentityIsNotForwarded() throws Exception {
        String up = start("");
        RawResponse response = post(up, "identity", "plain".getBytes(StandardCharsets.US_ASCII));

        assertEquals(200, response.status());
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertEquals(List.of(), got.headers("Content-Encoding"));
        assertEquals("plain", got.body());
    }

    @Test
    void anEmptyBodyWithAContentEncodingHasNothingToDecodeAndGoesOutEmpty() throws Exception {
        String up = start("");
        RawResponse response = post(up, "gzip", new byte[0]);

        assertEquals(200, response.status());
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertEquals("", got.body());
    }

    static Stream<Arguments> undecodable() {
        byte[] gz = gzipWithName("{\"q\":1}".getBytes(StandardCharsets.UTF_8));
        byte[] secret = ("\n" + PAT).getBytes(StandardCharsets.US_ASCII);
        byte[] truncated = java.util.Arrays.copyOf(gz, gz.length - 3);
        byte[] badCrc = gz.clone();
        badCrc[gz.length - 6] ^= 1;
        return Stream.of(
                Arguments.of(
                        "plain secret after the member",
                        "gzip",
                        Compressed.concat(gz, secret),
                        "content-encoding-trailing-data"),
                Arguments.of(
                        "a second member",
                        "gzip",
                        Compressed.concat(gz, gzipWithName(secret)),
                        "content-encoding-trailing-data"),
                Arguments.of("truncated", "gzip", truncated, "malformed-content-encoding"),
                Arguments.of("bad CRC", "gzip", badCrc, "malformed-content-encoding"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void undecodable(String name, String coding, byte[] body, String reason) throws Exception {
        String up = start("");
        RawResponse response = post(up, coding, body);

        assertEquals(400, response.status());
        assertEquals(reason, response.header(ProxyReasons.HEADER));
        assertNothingArrived();
        AuditRecord record = proxy.records().getFirst();
        assertEquals("deny", record.decision());
        assertEquals(reason, record.reason());
    }

    // ---- point 1: one reading of the body headers, through the proxy ----

    @Test
    void aSecondContentEncodingLineIsRefusedAndNothingArrives() throws Exception {
        String up = start("");
        byte[] gz = gzipWithName(("{\"k\":\"" + PAT + "\"}").getBytes(StandardCharsets.UTF_8));
        try (RawClient c = RawClient.connect(proxy.address())) {
            c.send("POST http://" + up + "/ HTTP/1.1\r\nHost: " + up + "\r\nContent-Encoding: identity\r\n"
                    + "Content-Encoding: gzip\r\nContent-Length: " + gz.length + "\r\n\r\n");
            c.send(gz);
            RawResponse response = c.readResponse(WAIT);

            assertEquals(400, response.status());
            assertEquals(StrictRequestDecoder.AMBIGUOUS_BODY_HEADER, response.header(ProxyReasons.HEADER));
            assertTrue(c.awaitClose(WAIT));
        }
        upstream.assertUntouched();
        assertEquals(
                StrictRequestDecoder.AMBIGUOUS_BODY_HEADER,
                proxy.records().getFirst().reason());
    }

    // ---- helpers ----

    private RawResponse post(String up, String coding, byte[] body) throws Exception {
        try (RawClient c = RawClient.connect(proxy.address())) {
            c.send("POST http://" + up + "/p HTTP/1.1\r\nHost: " + up + "\r\nContent-Type: application/json\r\n"
                    + "Content-Encoding: " + coding + "\r\nContent-Length: " + body.length + "\r\n\r\n");
            c.send(body);
            return c.readResponse(WAIT);
        }
    }

    private RecordingUpstream.RecordedRequest onlyRequest() throws InterruptedException {
        assertTrue(RecordingUpstream.await(() -> !upstream.requests().isEmpty(), WAIT));
        assertEquals(1, upstream.requests().size());
        return upstream.requests().getFirst();
    }

    /** The body was refused after the dial: every upstream connection ends, and not one byte went out on it. */
    private void assertNothingArrived() throws InterruptedException {
        assertTrue(
                RecordingUpstream.await(() -> upstream.closedConnections() == upstream.connections(), WAIT),
                "the upstream connection was not closed");
        assertEquals("", upstream.received());
        assertEquals(List.of(), upstream.requests());
    }

    private static byte[] gzipWithName(byte[] plain) {
        return Compressed.gzip(plain, Compressed.FNAME);
    }
}
