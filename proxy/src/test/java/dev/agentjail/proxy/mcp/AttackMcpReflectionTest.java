package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.testing.NettyLeakGuard;
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
 * Attack: an approved MCP server that is also the credential's host answers with the injected value JSON-escaped
 * ({@code \u0072eal-…}). ResponseScrubbing runs before McpResponseFilter and looks for the value's byte spellings
 * only, so it misses the escaped form; the filter then parses the message and writes it again (every event of a
 * stream, and a JSON answer whose list it filtered), and its writer emits the decoded string: the proxy itself turns
 * the escaped value into the plain real value in what reaches the jail. Control: the plain value is swapped.
 */
@ExtendWith(NettyLeakGuard.class)
class AttackMcpReflectionTest {
    private static final String HOST = "mcp.test";
    private static final String PLACEHOLDER = "agentjail-placeholder-0123456789abcdef0123456789abcdef";
    private static final String REAL = "real-mcp-token-7f3a9c1e5b2d4086";

    @TempDir
    Path dir;

    private TestTls tls;
    private RecordingUpstream upstream;
    private McpProxy proxy;

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

    static String answer(String mode, RecordingUpstream.RecordedRequest r) {
        String auth = r.headers("authorization").isEmpty()
                ? ""
                : r.headers("authorization").get(0);
        String key = auth.startsWith("Bearer ") ? auth.substring(7) : auth;
        String spelled = mode.startsWith("plain") || key.isEmpty()
                ? key
                : String.format("\\u%04x", (int) key.charAt(0)) + key.substring(1);
        if (mode.endsWith("sse")) {
            String body = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
                    + spelled + "\"}]}}\n\n";
            return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + body.length() + "\r\n\r\n"
                    + body;
        }
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"search\",\"description\":\""
                + spelled + "\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"delete_repo\",\"inputSchema\":"
                + "{\"type\":\"object\"}}]}}";
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n"
                + body;
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain-sse", "plain-json-list", "escaped-sse", "escaped-json-list"})
    void theRealValueNeverReachesTheJail(String mode) throws Exception {
        upstream = RecordingUpstream.startTls(tls.upstreamServer(HOST), r -> answer(mode, r));
        int port = upstream.port();
        String policy = """
                version: 1
                network:
                  allow: ["%1$s:%2$d"]
                  resolve: {%1$s: 127.0.0.1}
                mcp:
                  servers:
                    - name: docs
                      url: https://%1$s:%2$d/mcp
                      tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
                """.formatted(HOST, port);
        InjectedCredential credential = new InjectedCredential(
                new CredentialRule("MCP_TOKEN", null, List.of(new Target(HOST, HostKind.DNS, port)), "authorization"),
                PLACEHOLDER,
                REAL);
        proxy = new McpProxy(policy, Map.of(), tls.interception(), List.of(credential));
        String authority = HOST + ":" + port;
        String method = mode.endsWith("sse") ? "tools/call\",\"params\":{\"name\":\"search\"}" : "tools/list\"";
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + method + "}";
        TestTls.Connected c = TestTls.connect(proxy.address.getPort(), authority);
        String response;
        try (SSLSocket s = TestTls.handshake(
                c.socket(), TestTls.clientTrusting(tls.proxyCa().certificate()), HOST, HOST)) {
            s.setSoTimeout(10_000);
            s.getOutputStream()
                    .write(("POST /mcp HTTP/1.1\r\nHost: " + authority + "\r\nAuthorization: Bearer "
                                    + PLACEHOLDER + "\r\nContent-Type: application/json\r\nAccept: application/json, "
                                    + "text/event-stream\r\nConnection: close\r\nContent-Length: " + body.length()
                                    + "\r\n\r\n"
                                    + body)
                            .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            response = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(upstream.requests().getFirst().headers("authorization").contains("Bearer " + REAL), "injected");
        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        assertFalse(response.contains(REAL), mode + ": the real value reached the jail:\n" + response);
    }
}
