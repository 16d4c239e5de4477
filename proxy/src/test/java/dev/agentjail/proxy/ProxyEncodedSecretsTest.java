package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.audit.RedactionCount;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 17.3 and 17.5 end to end: the JDK's HttpClient through the intercepting proxy to a recording HTTPS upstream,
 * with secrets written as a receiver would decode them (a GitHub contents PUT of a base64 .env, hex and base64 in the
 * query and headers, a JSON escape in a form). Asserts what the upstream actually received, and the audit record.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyEncodedSecretsTest {
    private static final String HOST = "upstream.test";
    private static final String GITHUB_PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    @TempDir
    Path dir;

    private TestTls tls;
    private RecordingUpstream upstream;
    private ProxyFixture proxy;
    private String authority;
    private HttpClient client;

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
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n"
                        + redaction,
                new MemoryAuditSink(),
                null,
                Timeouts.defaults(),
                tls.interception());
        client = HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxy.port())))
                .sslContext(TestTls.clientTrusting(tls.proxyCa().certificate()))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String pathAndQuery) {
        return URI.create("https://" + authority + pathAndQuery);
    }

    private AuditRecord requestRecord() throws InterruptedException {
        RecordingUpstream.await(
                () -> proxy.records().stream().anyMatch(r -> r.method() != null && !"CONNECT".equals(r.method())),
                Duration.ofSeconds(5));
        return proxy.records().stream()
                .filter(r -> r.method() != null && !"CONNECT".equals(r.method()))
                .findFirst()
                .orElseThrow();
    }

    private static String envFile() {
        StringBuilder env = new StringBuilder();
        for (int k = 0; k < 30; k++) {
            env.append("SETTING_").append(k).append("=an ordinary value\n");
        }
        env.append("GITHUB_TOKEN=").append(GITHUB_PAT).append('\n');
        for (int k = 30; k < 60; k++) {
            env.append("SETTING_").append(k).append("=another ordinary value\n");
        }
        return env.toString();
    }

    @Test
    void aGithubContentsPutOfABase64EnvFileArrivesWithTheTokenRedactedInsideTheBase64() throws Exception {
        start("");
        String content = Base64.getMimeEncoder(60, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(envFile().getBytes(StandardCharsets.UTF_8))
                .replace("\n", "\\n");
        String body = "{\"message\":\"add config\",\"content\":\"" + content + "\"}";

        HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/repos/o/r/contents/.env"))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body)));

        assertEquals(200, response.statusCode());
        RecordingUpstream.await(() -> !upstream.requests().isEmpty(), Duration.ofSeconds(5));
        String got = upstream.requests().get(0).body();
        assertEquals(body.length(), got.length());
        String sent = got.substring(got.indexOf("\"content\":\"") + 11, got.length() - 2)
                .replace("\\n", "");
        String decoded = new String(Base64.getDecoder().decode(sent), StandardCharsets.UTF_8);
        assertFalse(decoded.contains(GITHUB_PAT), decoded);
        assertTrue(decoded.contains("GITHUB_TOKEN=[REDACTED:github-pat"), decoded);
        assertTrue(decoded.startsWith("SETTING_0=an ordinary value\n"), decoded);
        assertEquals(
                List.of(new RedactionCount("github-pat", "body/base64", 1)),
                requestRecord().redactions());
    }

    @Test
    void hexAndBase64InTheQueryAndHeadersAndAJsonEscapeInAFormAreRedacted() throws Exception {
        start("");
        String b64 =
                Base64.getUrlEncoder().withoutPadding().encodeToString(GITHUB_PAT.getBytes(StandardCharsets.UTF_8));
        String hex = HexFormat.of().withUpperCase().formatHex(GITHUB_PAT.getBytes(StandardCharsets.UTF_8));
        String form = "a=1&token=\\u0067hp_" + GITHUB_PAT.substring(4) + "&b=2";

        HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/upload?t=" + b64))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("X-Data", hex)
                .POST(HttpRequest.BodyPublishers.ofString(form)));

        assertEquals(200, response.statusCode());
        RecordingUpstream.await(() -> !upstream.requests().isEmpty(), Duration.ofSeconds(5));
        RecordingUpstream.RecordedRequest got = upstream.requests().get(0);
        assertFalse(got.head().contains(b64), got.head());
        assertFalse(got.head().contains(hex), got.head());
        assertFalse(got.body().contains(GITHUB_PAT.substring(4)), got.body());
        assertEquals(form.length(), got.body().length());
        String query = got.requestLine().split(" ")[1].substring("/upload?t=".length());
        assertTrue(new String(Base64.getUrlDecoder().decode(query), StandardCharsets.ISO_8859_1).contains("REDACTED"));
        List<RedactionCount> redactions = requestRecord().redactions();
        assertTrue(redactions.contains(new RedactionCount("github-pat", "target/base64", 1)), redactions.toString());
        assertTrue(
                redactions.contains(new RedactionCount("github-pat", "header:x-data/hex", 1)), redactions.toString());
        assertTrue(redactions.contains(new RedactionCount("github-pat", "body", 1)), redactions.toString());
    }

    @Test
    void anEncodedSecretThatCannotBeRewrittenInPlaceIsRefusedAndNeverSent() throws Exception {
        start("");
        StringBuilder escaped = new StringBuilder();
        for (char c : Base64.getEncoder()
                .encodeToString(GITHUB_PAT.getBytes(StandardCharsets.UTF_8))
                .toCharArray()) {
            escaped.append(String.format("\\x%02x", (int) c));
        }

        HttpResponse<String> response = send(
                HttpRequest.newBuilder(uri("/notes")).POST(HttpRequest.BodyPublishers.ofString(escaped.toString())));

        assertEquals(403, response.statusCode());
        assertEquals(
                "secret-not-rewritable",
                response.headers().firstValue("X-Agentjail-Reason").orElse(""));
        AuditRecord record = requestRecord();
        assertEquals("secret-not-rewritable", record.reason());
        assertEquals(List.of(new RedactionCount("github-pat", "body/base64", 1)), record.redactions());
        upstream.requests().forEach(r -> assertFalse(r.body().contains("\\x"), r.body()));
    }

    @Test
    void inBlockModeABase64SecretInABodyWithNoTypeIsRefused() throws Exception {
        start("redaction:\n  action: block\n");
        String body = Base64.getEncoder().encodeToString(("token=" + GITHUB_PAT).getBytes(StandardCharsets.UTF_8));

        HttpResponse<String> response =
                send(HttpRequest.newBuilder(uri("/notes")).POST(HttpRequest.BodyPublishers.ofString(body)));

        assertEquals(403, response.statusCode());
        assertEquals(
                "secret-blocked",
                response.headers().firstValue("X-Agentjail-Reason").orElse(""));
        upstream.requests().forEach(r -> assertFalse(r.body().contains(body.substring(0, 20)), r.body()));
    }
}
