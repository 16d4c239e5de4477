package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.redact.ContentCodings;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Redaction and credential injection end to end (corpus section 8.2): real TLS interception, a
 * recording HTTPS upstream, and assertions on the exact bytes it received and on the audit record.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyRedactionTest {
    private static final String HOST = "upstream.test";
    /** Synthetic canaries in real formats; never real keys. */
    private static final String GITHUB_PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private static final String GOOGLE_KEY = "AIza" + "Sy0123456789abcdefghijklmnopqrstuvw";
    private static final String KNOWN = "host-secret-value-7431";
    private static final String REAL_KEY = "real-api-key-0f9e8d7c6b5a";
    private static final String PLACEHOLDER = "agentjail-placeholder-00112233445566778899aabbccddeeff";

    @TempDir
    Path dir;

    private TestTls tls;
    private RecordingUpstream upstream;
    private ProxyFixture proxy;
    private String authority;

    @BeforeEach
    void setUp() throws Exception {
        tls = new TestTls(dir);
        upstream = RecordingUpstream.startTls(tls.upstreamServer(HOST), r -> RecordingUpstream.OK);
        authority = HOST + ":" + upstream.port();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        upstream.close();
        tls.close();
    }

    private void start(String redaction) throws Exception {
        start(redaction, new Target(HOST, HostKind.DNS, upstream.port()));
    }

    /** Starts the proxy with the test credential injected for {@code credentialHost} only. */
    private void start(String redaction, Target credentialHost) throws Exception {
        String policy = "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n"
                + redaction;
        InjectedCredential credential = new InjectedCredential(
                new CredentialRule("UPSTREAM_KEY", null, List.of(credentialHost), "x-api-key"), PLACEHOLDER, REAL_KEY);
        proxy = ProxyFixture.start(
                policy,
                new MemoryAuditSink(),
                null,
                Timeouts.defaults(),
                tls.interception(),
                Map.of("HOST_SECRET", KNOWN),
                List.of(credential));
    }

    /** Sends one request through an intercepted tunnel, {@code body} written in chunks of {@code chunk} bytes. */
    private String send(String head, byte[] body, int chunk) throws Exception {
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        try (SSLSocket s = TestTls.handshake(
                c.socket(), TestTls.clientTrusting(tls.proxyCa().certificate()), HOST, HOST)) {
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            try {
                for (int i = 0; i < body.length; i += chunk) {
                    out.write(body, i, Math.min(chunk, body.length - i));
                    out.flush();
                }
            } catch (java.net.SocketException refusedEarly) {
                // A request refused on its head is answered and closed while its body may still be on the way: the
                // answer was sent before the close, and is what the test reads.
            }
            InputStream in = s.getInputStream();
            String response = TestTls.readHead(in);
            int cl = response.toLowerCase().indexOf("content-length: ");
            if (cl >= 0) {
                int n = Integer.parseInt(response.substring(cl + 16, response.indexOf("\r\n", cl))
                        .strip());
                response += TestTls.readBody(in, n);
            }
            return response;
        }
    }

    private String post(String path, String contentType, byte[] body, String extraHeaders, int chunk) throws Exception {
        return send(
                "POST " + path + " HTTP/1.1\r\nHost: " + authority + "\r\nContent-Type: " + contentType
                        + "\r\nContent-Length: " + body.length + "\r\n" + extraHeaders + "\r\n",
                body,
                chunk);
    }

    private AuditRecord requestRecord() throws InterruptedException {
        RecordingUpstream.await(
                () -> proxy.records().stream().anyMatch(r -> !"CONNECT".equals(r.method())), Duration.ofSeconds(5));
        return proxy.records().stream()
                .filter(r -> r.method() != null && !"CONNECT".equals(r.method()))
                .findFirst()
                .orElseThrow();
    }

    private RecordingUpstream.RecordedRequest onlyRequest() throws InterruptedException {
        RecordingUpstream.await(() -> !upstream.requests().isEmpty(), Duration.ofSeconds(5));
        assertEquals(1, upstream.requests().size());
        return upstream.requests().get(0);
    }

    @Test
    void aSecretInAJsonBodyIsReplacedInPlaceAndTheBodyStaysValid() throws Exception {
        start("");
        String json = "{\"messages\":[{\"role\":\"user\",\"content\":\"my token is " + GITHUB_PAT + " ok\"}]}";
        byte[] body = json.getBytes(StandardCharsets.UTF_8);

        String response = post("/v1/messages", "application/json", body, "", body.length);

        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertFalse(got.body().contains(GITHUB_PAT), got.body());
        assertEquals(body.length, got.body().length(), "same length: Content-Length still true");
        assertEquals(List.of(Integer.toString(body.length)), got.headers("content-length"));
        assertTrue(got.body().contains("[REDACTED:github-pat"), got.body());
        assertTrue(got.body().startsWith("{\"messages\":[{\"role\":\"user\",\"content\":\"my token is "), got.body());
        assertTrue(got.body().endsWith(" ok\"}]}"), got.body());
        AuditRecord record = requestRecord();
        assertEquals(List.of(new RedactionCount("github-pat", "body", 1)), record.redactions());
        assertEquals("allow", record.decision());
    }

    @Test
    void caseOneTwentyThreeASecretSplitAcrossTlsRecordsIsStillFound() throws Exception {
        start("");
        byte[] body = ("{\"k\":\"" + GITHUB_PAT + "\"}").getBytes(StandardCharsets.UTF_8);

        post("/split", "application/json", body, "", 1);

        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertFalse(got.body().contains(GITHUB_PAT), got.body());
        assertEquals(body.length, got.body().length());
    }

    @Test
    void secretsInTheTargetAndHeadersAreRedactedAndNeverRecorded() throws Exception {
        start("");
        String response = send(
                "GET /v1/x?key=" + GOOGLE_KEY + "&q=1 HTTP/1.1\r\nHost: " + authority + "\r\nAuthorization: Bearer "
                        + GITHUB_PAT + "\r\n\r\n",
                new byte[0],
                1);

        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertFalse(got.head().contains(GOOGLE_KEY), got.head());
        assertFalse(got.head().contains(GITHUB_PAT), got.head());
        assertTrue(got.requestLine().startsWith("GET /v1/x?key="), got.requestLine());
        assertTrue(got.requestLine().endsWith("&q=1 HTTP/1.1"), got.requestLine());
        AuditRecord record = requestRecord();
        assertTrue(record.redactions().contains(new RedactionCount("google-api-key", "target", 1)), record.toString());
        assertTrue(
                record.redactions().contains(new RedactionCount("github-pat", "header:authorization", 1)),
                record.toString());
    }

    @Test
    void aKnownHostSecretIsRedactedWhereverItAppears() throws Exception {
        start("");
        byte[] body = ("note=" + KNOWN).getBytes(StandardCharsets.UTF_8);

        post("/form", "application/x-www-form-urlencoded", body, "", 4);

        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertFalse(got.body().contains(KNOWN), got.body());
        assertEquals(
                List.of(new RedactionCount("known:HOST_SECRET", "body", 1)),
                requestRecord().redactions());
    }

    @Test
    void aGzipBodyIsDecodedRedactedAndReEncoded() throws Exception {
        start("");
        byte[] plain = ("{\"key\":\"" + GITHUB_PAT + "\",\"pad\":\"" + "x".repeat(2000) + "\"}")
                .getBytes(StandardCharsets.UTF_8);
        byte[] gz = gzip(plain);

        String response = post("/gz", "application/json", gz, "Content-Encoding: gzip\r\n", 512);

        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        RecordingUpstream.RecordedRequest got = onlyRequest();
        byte[] received = got.body().getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(List.of(Integer.toString(received.length)), got.headers("content-length"));
        String decoded = new String(gunzip(received), StandardCharsets.UTF_8);
        assertFalse(decoded.contains(GITHUB_PAT));
        assertEquals(plain.length, decoded.length());
        assertEquals(
                List.of(new RedactionCount("github-pat", "body", 1)),
                requestRecord().redactions());
    }

    @Test
    void anEncodingTheRedactorCannotReadIsRefused() throws Exception {
        start("");
        String response = post("/br", "application/json", new byte[] {1, 2, 3}, "Content-Encoding: br\r\n", 3);

        assertTrue(response.startsWith("HTTP/1.1 403"), response);
        assertTrue(response.contains(ProxyReasons.HEADER + ": " + ProxyReasons.UNINSPECTABLE_BODY), response);
        assertTrue(upstream.requests().isEmpty());
    }

    @Test
    void inBlockModeASecretInTheBodyIsRefusedAndItsBytesNeverLeave() throws Exception {
        start("redaction:\n  action: block\n");
        byte[] body =
                ("{\"a\":\"" + "y".repeat(100) + "\",\"k\":\"" + GITHUB_PAT + "\"}").getBytes(StandardCharsets.UTF_8);

        String response = post("/block", "application/json", body, "", 16);

        assertTrue(response.startsWith("HTTP/1.1 403"), response);
        assertTrue(response.contains(ProxyReasons.HEADER + ": " + ProxyReasons.SECRET_BLOCKED), response);
        Thread.sleep(100);
        assertTrue(upstream.requests().isEmpty(), "no complete request reached the upstream");
        assertFalse(upstream.received().contains(GITHUB_PAT.substring(0, 12)), upstream.received());
        AuditRecord record = requestRecord();
        assertEquals("deny", record.decision());
        assertEquals(ProxyReasons.SECRET_BLOCKED, record.reason());
        assertEquals(List.of(new RedactionCount("github-pat", "body", 1)), record.redactions());
    }

    @Test
    void caseOneTwentyFiveASecretInAGitPackIsBlockedNotRewritten() throws Exception {
        start("");
        byte[] body = ("0000PACK\n" + GITHUB_PAT).getBytes(StandardCharsets.ISO_8859_1);

        String response =
                post("/repo.git/git-receive-pack", "application/x-git-receive-pack-request", body, "", body.length);

        assertTrue(response.startsWith("HTTP/1.1 403"), response);
        assertTrue(response.contains(ProxyReasons.HEADER + ": " + ProxyReasons.SECRET_BLOCKED), response);
        assertTrue(upstream.requests().isEmpty());
    }

    @Test
    void aCredentialHostThatEchoesTheKeyNeverHandsTheRealValueToTheJail() throws Exception {
        upstream.close();
        // An endpoint that reflects the request headers, in a header and in a chunked body, the key split across
        // chunks.
        upstream = RecordingUpstream.startTls(tls.upstreamServer(HOST), r -> {
            String key = r.headers("x-api-key").isEmpty()
                    ? ""
                    : r.headers("x-api-key").get(0);
            String half = key.substring(0, key.length() / 2);
            String rest = key.substring(key.length() / 2);
            String first = "{\"your_key\":\"" + half;
            String second = rest + "\",\"again\":\"" + key + "\"}";
            return "HTTP/1.1 200 OK\r\nX-Echo: key=" + key + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + Integer.toHexString(first.length()) + "\r\n" + first + "\r\n"
                    + Integer.toHexString(second.length()) + "\r\n" + second + "\r\n0\r\n\r\n";
        });
        authority = HOST + ":" + upstream.port();
        start("");

        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        String response;
        try (SSLSocket s = TestTls.handshake(
                c.socket(), TestTls.clientTrusting(tls.proxyCa().certificate()), HOST, HOST)) {
            s.getOutputStream()
                    .write(("GET /v1/echo HTTP/1.1\r\nHost: " + authority + "\r\nx-api-key: " + PLACEHOLDER
                                    + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            response = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }

        assertEquals(List.of(REAL_KEY), onlyRequest().headers("x-api-key"), "the key was injected");
        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        assertFalse(response.contains(REAL_KEY), response);
        assertFalse(response.contains(REAL_KEY.substring(0, REAL_KEY.length() / 2) + "\r\n"), response);
        String swapped = PLACEHOLDER.substring(0, REAL_KEY.length());
        assertTrue(response.contains("X-Echo: key=" + swapped), response);
        assertTrue(response.contains("\"again\":\"" + swapped + "\""), response);
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {
                "Content-Encoding: gzip\r\nContent-Length: 3",
                "Content-Encoding: identity\r\nContent-Encoding: gzip\r\nContent-Length: 3",
                "Content-Encoding: identity, GZIP\r\nContent-Length: 3",
                "Transfer-Encoding: gzip, chunked",
            })
    void aCompressedAnswerToACredentialRequestIsRefusedForItCouldHideTheKey(String framing) throws Exception {
        upstream.close();
        upstream = RecordingUpstream.startTls(
                tls.upstreamServer(HOST),
                r -> "HTTP/1.1 200 OK\r\n" + framing + "\r\n\r\n"
                        + (framing.contains("chunked") ? "3\r\nabc\r\n0\r\n\r\n" : "abc"));
        authority = HOST + ":" + upstream.port();
        start("");

        String response = send(
                "GET /v1/models HTTP/1.1\r\nHost: " + authority + "\r\nAccept-Encoding: gzip\r\nx-api-key: "
                        + PLACEHOLDER + "\r\n\r\n",
                new byte[0],
                1);

        assertTrue(response.startsWith("HTTP/1.1 502"), response);
        assertTrue(response.contains(ProxyReasons.HEADER + ": " + ProxyReasons.CREDENTIAL_RESPONSE_ENCODED), response);
        assertEquals(List.of("identity"), onlyRequest().headers("accept-encoding"), "identity was asked for");
    }

    @Test
    void theCredentialPlaceholderIsSwappedOnlyInItsHeaderForItsHost() throws Exception {
        start("");
        byte[] body = ("{\"leak\":\"" + PLACEHOLDER + "\"}").getBytes(StandardCharsets.UTF_8);

        String response = post(
                "/v1/messages",
                "application/json",
                body,
                "x-api-key: " + PLACEHOLDER + "\r\n" + "x-other: " + PLACEHOLDER + "\r\n",
                body.length);

        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertEquals(List.of(REAL_KEY), got.headers("x-api-key"));
        assertFalse(got.head().contains(PLACEHOLDER), "the placeholder in another header is redacted");
        assertFalse(got.body().contains(PLACEHOLDER), "the placeholder in the body is redacted");
        assertFalse(got.headers("x-other").get(0).contains(REAL_KEY), "the real value goes only in its header");
        AuditRecord record = requestRecord();
        assertTrue(
                record.redactions()
                        .contains(new RedactionCount("credential-placeholder:UPSTREAM_KEY", "header:x-other", 1)),
                record.toString());
    }

    @Test
    void theCredentialIsNeverInjectedIntoRequestsToAnotherHost() throws Exception {
        start("", new Target("api.credential-host.test", HostKind.DNS, 443));
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);

        String response = post("/v1", "application/json", body, "x-api-key: " + PLACEHOLDER + "\r\n", body.length);

        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertFalse(got.head().contains(REAL_KEY), "the real value went to a host it is not for");
        assertFalse(got.head().contains(PLACEHOLDER), "the placeholder went out unredacted");
        assertTrue(requestRecord()
                .redactions()
                .contains(new RedactionCount("credential-placeholder:UPSTREAM_KEY", "header:x-api-key", 1)));
    }

    @Test
    void aSecretAsAHeaderNameNeverReachesTheUpstreamThroughTheTunnel() throws Exception {
        start("");
        String response = send(
                "GET /v1 HTTP/1.1\r\nHost: " + authority + "\r\nX-" + GITHUB_PAT + ": 1\r\nX-Kept: yes\r\n\r\n",
                new byte[0],
                1);

        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        RecordingUpstream.RecordedRequest got = onlyRequest();
        assertFalse(got.head().contains(GITHUB_PAT.substring(4)), got.head());
        assertEquals(List.of("yes"), got.headers("X-Kept"));
        assertEquals(
                List.of(new RedactionCount("github-pat", "header-name", 1)),
                requestRecord().redactions());
    }

    @Test
    void aDeflateBodyIsSentAsTheRedactedReEncodingNeverTheClientsBytes() throws Exception {
        start("");
        byte[] plain = ("{\"key\":\"" + GITHUB_PAT + "\"}").getBytes(StandardCharsets.UTF_8);
        byte[] zlib = ContentCodings.encode("deflate", plain);

        String response = post("/z", "application/json", zlib, "Content-Encoding: Deflate\r\n", 7);

        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        RecordingUpstream.RecordedRequest got = onlyRequest();
        byte[] received = got.body().getBytes(StandardCharsets.ISO_8859_1);
        String decoded = new String(
                ContentCodings.decode("deflate", received, ContentCodings.Limits.defaults()), StandardCharsets.UTF_8);
        assertFalse(decoded.contains(GITHUB_PAT), decoded);
        assertEquals(plain.length, decoded.length());
        assertEquals(List.of("deflate"), got.headers("content-encoding"));
    }

    @Test
    void aSecondGzipMemberIsRefusedAndNoByteOfItLeaves() throws Exception {
        start("");
        byte[] first = gzip("{\"q\":\"fine\"}".getBytes(StandardCharsets.UTF_8));
        byte[] second = gzip(GITHUB_PAT.getBytes(StandardCharsets.US_ASCII));
        byte[] body = java.util.Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, body, first.length, second.length);

        String response = post("/gz2", "application/json", body, "Content-Encoding: gzip\r\n", 64);

        assertTrue(response.startsWith("HTTP/1.1 400"), response);
        assertTrue(response.contains(ProxyReasons.HEADER + ": content-encoding-trailing-data"), response);
        assertTrue(RecordingUpstream.await(
                () -> upstream.closedConnections() == upstream.connections(), Duration.ofSeconds(5)));
        assertEquals("", upstream.received());
        assertEquals("content-encoding-trailing-data", requestRecord().reason());
    }

    @Test
    void twoContentEncodingLinesAreRefusedInsideTheTunnel() throws Exception {
        start("");
        byte[] gz = gzip(("{\"k\":\"" + GITHUB_PAT + "\"}").getBytes(StandardCharsets.UTF_8));

        String response =
                post("/ce2", "application/json", gz, "Content-Encoding: identity\r\ncontent-encoding: gzip\r\n", 64);

        assertTrue(response.startsWith("HTTP/1.1 400"), response);
        assertTrue(
                response.contains(ProxyReasons.HEADER + ": " + StrictRequestDecoder.AMBIGUOUS_BODY_HEADER), response);
        assertEquals(List.of(), upstream.requests());
        assertFalse(upstream.received().contains("content-encoding"), upstream.received());
        RecordingUpstream.await(
                () -> proxy.records().stream()
                        .anyMatch(r -> StrictRequestDecoder.AMBIGUOUS_BODY_HEADER.equals(r.reason())),
                Duration.ofSeconds(5));
        assertTrue(
                proxy.records().stream().anyMatch(r -> StrictRequestDecoder.AMBIGUOUS_BODY_HEADER.equals(r.reason())));
    }

    private static byte[] gzip(byte[] data) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(data);
        }
        return out.toByteArray();
    }

    private static byte[] gunzip(byte[] data) throws Exception {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(data))) {
            return in.readAllBytes();
        }
    }
}
