package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attack: the credential's host reflects the injected value in places of the response other than header values and
 * body bytes (trailers and 1xx hold; the status line's reason phrase does not). Rule: "Responses from a credential's host never carry the real value back."
 */
@ExtendWith(NettyLeakGuard.class)
class AttackReflectionTest {
    private static final String HOST = "upstream.test";
    private static final String REAL_KEY = "real-api-key-0f9e8d7c6b5a";
    private static final String PLACEHOLDER = "agentjail-placeholder-00112233445566778899aabbccddeeff";

    @TempDir
    Path dir;

    private TestTls tls;
    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @BeforeEach
    void setUp() throws Exception {
        tls = new TestTls(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (upstream != null) {
            upstream.close();
        }
        tls.close();
    }

    static String answer(String where, String key) {
        return switch (where) {
            case "reason-phrase" -> "HTTP/1.1 200 " + key + "\r\nContent-Length: 2\r\n\r\nok";
            case "trailer" ->
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Echo\r\n\r\n2\r\nok\r\n0\r\nX-Echo: " + key
                        + "\r\n\r\n";
            case "informational" ->
                "HTTP/1.1 103 Early Hints\r\nLink: </" + key
                        + ">\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            case "close-delimited-body-end" -> "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nxx" + key;
            case "uppercase-title" ->
                "HTTP/1.1 200 OK\r\nContent-Length: " + (key.length()) + "\r\n\r\n"
                        + Character.toUpperCase(key.charAt(0)) + key.substring(1);
            default -> throw new IllegalArgumentException(where);
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"reason-phrase", "trailer", "informational"})
    void theRealValueNeverComesBack(String where) throws Exception {
        upstream = RecordingUpstream.startTls(tls.upstreamServer(HOST), r -> {
            String key = r.headers("x-api-key").isEmpty()
                    ? ""
                    : r.headers("x-api-key").get(0);
            return answer(where, key);
        });
        String authority = HOST + ":" + upstream.port();
        InjectedCredential credential = new InjectedCredential(
                new CredentialRule(
                        "UPSTREAM_KEY", null, List.of(new Target(HOST, HostKind.DNS, upstream.port())), "x-api-key"),
                PLACEHOLDER,
                REAL_KEY);
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n",
                new MemoryAuditSink(),
                null,
                Timeouts.defaults(),
                tls.interception(),
                Map.of(),
                List.of(credential));
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        String response;
        try (SSLSocket s = TestTls.handshake(
                c.socket(), TestTls.clientTrusting(tls.proxyCa().certificate()), HOST, HOST)) {
            s.setSoTimeout(10_000);
            s.getOutputStream()
                    .write(("GET /v1/echo HTTP/1.1\r\nHost: " + authority + "\r\nx-api-key: " + PLACEHOLDER
                                    + "\r\nTE: trailers\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            response = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
        assertTrue(response.startsWith("HTTP/1.1 "), response);
        assertFalse(response.contains(REAL_KEY), where + ": the real key reached the jail:\n" + response);
    }
}
