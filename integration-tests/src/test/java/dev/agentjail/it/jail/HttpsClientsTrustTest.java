package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jail trusts agentjail's CA with no flags: curl, Python's urllib, Node's https, the JDK's HttpClient and git,
 * each run inside the jail with nothing but the environment the jail sets, reach a WireMock HTTPS upstream through
 * the proxy, which intercepts the TLS (a leaf certificate from the local CA towards the client; the upstream's own
 * self-signed certificate verified through the policy's {@code tls.upstream_ca}). Each request arrives at WireMock and
 * its audit record says {@code "tls":"intercept"}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HttpsClientsTrustTest {
    /** A commit id for git's ref advertisement; any 40 hex digits do. */
    static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";

    static InterceptedUpstream upstream;

    @TempDir
    static Path tlsDir;

    @TempDir
    Path dir;

    @BeforeAll
    static void startUpstream() throws Exception {
        upstream = InterceptedUpstream.start(tlsDir);
        upstream.server()
                .stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("hello over intercepted TLS")));
        upstream.server()
                .stubFor(get(urlEqualTo("/repo.git/info/refs?service=git-upload-pack"))
                        .willReturn(aResponse()
                                .withStatus(200)
                                .withHeader("Content-Type", "application/x-git-upload-pack-advertisement")
                                .withHeader("Cache-Control", "no-cache")
                                .withBody(refAdvertisement())));
    }

    @AfterAll
    static void stopUpstream() {
        if (upstream != null) {
            upstream.close();
        }
    }

    @Test
    void curlTrustsTheCaWithNoFlags() {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Prerequisites.CURL);
        AgentjailRun.Outcome o = runIn("""
                echo "curl=$(curl -q -sS -m 20 -w ' %%{http_code}' %s/curl)"
                """.formatted(upstream.origin()));
        assertEquals("hello over intercepted TLS 200", o.probe("curl"), o::describe);
        assertArrivedIntercepted(o, "/curl");
    }

    @Test
    void pythonUrllibTrustsTheCaWithNoFlags() {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Path.of("/usr/bin/python3"));
        AgentjailRun.Outcome o = runIn("""
                /usr/bin/python3 -c 'import sys, urllib.request
                r = urllib.request.urlopen(sys.argv[1], timeout=20)
                print("python=" + r.read().decode() + " " + str(r.status))' %s/python
                """.formatted(upstream.origin()));
        assertEquals("hello over intercepted TLS 200", o.probe("python"), o::describe);
        assertArrivedIntercepted(o, "/python");
    }

    /**
     * Node 20's {@code fetch} ignores the proxy variables (it needs undici's own agent), so this does what proxy-aware
     * Node code does: CONNECT through {@code HTTPS_PROXY}, then TLS with Node's default trust, which {@code
     * NODE_EXTRA_CA_CERTS} extends; no {@code ca} option anywhere.
     */
    @Test
    void nodeHttpsTrustsTheCaWithNoFlags() throws Exception {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Prerequisites.NODE);
        AgentjailRun run = AgentjailRun.in(dir).policy(upstream.policy(""));
        Files.writeString(run.project().resolve("get.mjs"), """
                import http from 'node:http';
                import https from 'node:https';
                import tls from 'node:tls';
                const target = new URL(process.argv[2]);
                const proxy = new URL(process.env.HTTPS_PROXY);
                const fail = (what) => { console.log('node=' + what); process.exit(1); };
                const connect = http.request({
                  host: proxy.hostname, port: proxy.port, method: 'CONNECT',
                  path: target.host, headers: { Host: target.host },
                });
                connect.setTimeout(20000, () => connect.destroy(new Error('timeout')));
                connect.on('error', (e) => fail('error ' + e.message));
                connect.on('connect', (res, socket) => {
                  if (res.statusCode !== 200) fail('connect ' + res.statusCode);
                  // No agent: then Node uses createConnection's socket (agent: false would dial again).
                  const req = https.request({
                    host: target.hostname, port: target.port, path: target.pathname,
                    createConnection: () => tls.connect({ socket, host: target.hostname, servername: target.hostname }),
                  }, (r) => {
                    let body = '';
                    r.setEncoding('utf8');
                    r.on('data', (c) => (body += c));
                    r.on('end', () => { console.log('node=' + body + ' ' + r.statusCode); socket.destroy(); });
                  });
                  req.on('error', (e) => fail('error ' + e.code + ' ' + e.message));
                  req.end();
                });
                connect.end();
                """);
        AgentjailRun.Outcome o = run.run("/usr/bin/node", "get.mjs", upstream.origin() + "/node");
        assertEquals("hello over intercepted TLS 200", o.probe("node"), o::describe);
        assertArrivedIntercepted(o, "/node");
    }

    /**
     * Node's own {@code fetch}, as agents written for Node call it: no proxy code, no CA option. It finds the
     * proxy through {@code NODE_USE_ENV_PROXY=1} and {@code HTTPS_PROXY}, and trusts the CA through {@code
     * NODE_EXTRA_CA_CERTS}, both set by the jail (needs Node >= 24.5: see {@link Prerequisites#MODERN_NODE}).
     */
    @Test
    void nodeFetchTrustsTheCaWithNoFlags() throws Exception {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Prerequisites.MODERN_NODE);
        AgentjailRun run = AgentjailRun.in(dir).policy(upstream.policy(""));
        Files.writeString(run.project().resolve("fetch.mjs"), """
                const r = await fetch(process.argv[2]);
                console.log('fetch=' + (await r.text()) + ' ' + r.status);
                """);
        AgentjailRun.Outcome o =
                run.run(Prerequisites.MODERN_NODE.toString(), "fetch.mjs", upstream.origin() + "/fetch");
        assertEquals("hello over intercepted TLS 200", o.probe("fetch"), o::describe);
        assertArrivedIntercepted(o, "/fetch");
    }

    /**
     * The JDK's HttpClient with the default proxy selector (which reads the {@code https.proxyHost} the jail's {@code
     * JAVA_TOOL_OPTIONS} sets) and the default trust store (which the same options point at the jail's PKCS#12 store).
     * Run as a single source file by the JDK running these tests, which the jail sees under /usr.
     */
    @Test
    void jdkHttpClientTrustsTheCaWithNoFlags() throws Exception {
        AgentjailRun.requireBwrap();
        Path java = AgentjailRun.java().toRealPath();
        Prerequisites.require(
                java.startsWith("/usr/"), "a JDK under /usr, visible inside the jail (the tests run " + java + ")");
        AgentjailRun run = AgentjailRun.in(dir).policy(upstream.policy(""));
        Files.writeString(run.project().resolve("Get.java"), """
                import java.net.ProxySelector;
                import java.net.URI;
                import java.net.http.HttpClient;
                import java.net.http.HttpRequest;
                import java.net.http.HttpResponse;
                import java.time.Duration;

                public class Get {
                    public static void main(String[] args) throws Exception {
                        HttpClient client = HttpClient.newBuilder()
                                .proxy(ProxySelector.getDefault())
                                .connectTimeout(Duration.ofSeconds(20))
                                .build();
                        HttpResponse<String> r = client.send(
                                HttpRequest.newBuilder(URI.create(args[0])).build(), HttpResponse.BodyHandlers.ofString());
                        System.out.println("java=" + r.body() + " " + r.statusCode());
                    }
                }
                """);
        AgentjailRun.Outcome o = run.run(java.toString(), "-Xmx256m", "Get.java", upstream.origin() + "/java");
        assertEquals("hello over intercepted TLS 200", o.probe("java"), o::describe);
        assertArrivedIntercepted(o, "/java");
    }

    @Test
    void gitOverHttpsTrustsTheCaWithNoFlags() {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Path.of("/usr/bin/git"));
        AgentjailRun.Outcome o = runIn("""
                refs=$(GIT_TERMINAL_PROMPT=0 git ls-remote %s/repo.git)
                echo "git=$(echo "$refs" | grep refs/heads/main | tr '\\t' ' ')"
                """.formatted(upstream.origin()));
        assertEquals(COMMIT + " refs/heads/main", o.probe("git"), o::describe);
        assertFalse(
                upstream.received("/repo.git/info/refs?service=git-upload-pack").isEmpty(),
                "git's request reached the upstream");
        JsonNode record = upstream.requestRecord(o.audit(), "/repo.git/info/refs")
                .orElseThrow(() -> new AssertionError("no record of git's request in " + o.audit()));
        assertEquals(AuditRecord.TLS_INTERCEPT, record.path("tls").asText(), record::toString);
    }

    private AgentjailRun.Outcome runIn(String script) {
        AgentjailRun run = AgentjailRun.in(dir).policy(upstream.policy(""));
        AgentjailRun.Outcome o = run.bash(script);
        assertEquals(0, o.exitCode(), o::describe);
        return o;
    }

    private static void assertArrivedIntercepted(AgentjailRun.Outcome o, String path) {
        assertEquals(
                1, upstream.received(path).size(), () -> path + " should reach the upstream once; " + o.describe());
        JsonNode record = upstream.requestRecord(o.audit(), path)
                .orElseThrow(() -> new AssertionError("no request record for " + path + " in " + o.audit()));
        assertAll(
                () -> assertEquals(AuditRecord.TLS_INTERCEPT, record.path("tls").asText(), record::toString),
                () -> assertEquals(AuditRecord.ALLOW, record.path("decision").asText(), record::toString),
                () -> assertEquals(200, record.path("status").asInt(), record::toString));
        List<JsonNode> starts = o.records(AuditRecord.KIND_SESSION_START);
        assertTrue(starts.get(0).path("env_names").toString().contains("\"SSL_CERT_FILE\""), starts.get(0)::toString);
    }

    /** A smart-HTTP (protocol v0) ref advertisement: HEAD and refs/heads/main at {@link #COMMIT}. */
    static byte[] refAdvertisement() {
        String body = pkt("# service=git-upload-pack\n")
                + "0000"
                + pkt(COMMIT + " HEAD\0symref=HEAD:refs/heads/main agent=wiremock\n")
                + pkt(COMMIT + " refs/heads/main\n")
                + "0000";
        return body.getBytes(StandardCharsets.US_ASCII);
    }

    private static String pkt(String payload) {
        return String.format("%04x", payload.length() + 4) + payload;
    }
}
