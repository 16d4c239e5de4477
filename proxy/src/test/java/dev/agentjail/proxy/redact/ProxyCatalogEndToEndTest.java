package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every catalog entry end to end: a JSON body carrying the canary goes through a real intercepted
 * tunnel to a recording HTTPS upstream, which must receive valid JSON of the same length without the
 * secret, and the request's record must name the kind, never the value.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyCatalogEndToEndTest {
    private static final String HOST = "upstream.test";

    @TempDir
    Path dir;

    @Test
    void theUpstreamNeverSeesACatalogSecretAndTheBodyStaysValid() throws Exception {
        List<Canaries.Canary> canaries = Canaries.all();
        try (TestTls tls = new TestTls(dir);
                RecordingUpstream upstream =
                        RecordingUpstream.startTls(tls.upstreamServer(HOST), r -> RecordingUpstream.OK)) {
            String authority = HOST + ":" + upstream.port();
            try (ProxyFixture proxy = ProxyFixture.start(
                    "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n",
                    new MemoryAuditSink(),
                    null,
                    Timeouts.defaults(),
                    tls.interception())) {
                List<String> sent = new ArrayList<>();
                TestTls.Connected c = TestTls.connect(proxy.port(), authority);
                try (SSLSocket s = TestTls.handshake(
                        c.socket(), TestTls.clientTrusting(tls.proxyCa().certificate()), HOST, HOST)) {
                    OutputStream out = s.getOutputStream();
                    InputStream in = s.getInputStream();
                    for (int i = 0; i < canaries.size(); i++) {
                        Canaries.Canary canary = canaries.get(i);
                        String json = "{\"n\":" + i + ",\"text\":\"see " + JsonCheck.escape(canary.before(), false)
                                + JsonCheck.escape(canary.secret(), false) + " here\"}";
                        byte[] body = json.getBytes(StandardCharsets.UTF_8);
                        sent.add(json);
                        out.write(("POST /c/" + i + " HTTP/1.1\r\nHost: " + authority
                                        + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                                        + "\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                        out.write(body);
                        out.flush();
                        String head = TestTls.readHead(in);
                        assertTrue(head.startsWith("HTTP/1.1 200"), canary.kind() + ": " + head);
                        TestTls.readBody(in, RecordingUpstream.OK_BODY.length());
                    }
                }
                RecordingUpstream.await(() -> upstream.requests().size() == canaries.size(), Duration.ofSeconds(10));
                RecordingUpstream.await(() -> proxy.records().size() >= canaries.size() + 1, Duration.ofSeconds(10));
                Map<String, AuditRecord> records = proxy.records().stream()
                        .filter(r -> r.path() != null && r.path().startsWith("/c/"))
                        .collect(Collectors.toMap(AuditRecord::path, Function.identity()));
                List<Executable> checks = new ArrayList<>();
                for (int i = 0; i < canaries.size(); i++) {
                    int n = i;
                    Canaries.Canary canary = canaries.get(i);
                    checks.add(() -> {
                        String received = upstream.requests().get(n).body();
                        String what = canary.kind() + " #" + n;
                        assertFalse(received.contains(canary.secret()), what + ": the secret reached the upstream");
                        assertEquals(sent.get(n).length(), received.length(), what + ": same length");
                        JsonCheck.validate(received);
                        AuditRecord record = records.get("/c/" + n);
                        assertTrue(
                                record.redactions().stream()
                                        .anyMatch(r -> r.kind().equals(canary.kind())),
                                what + ": recorded as " + record.redactions());
                        assertFalse(
                                record.toString().contains(canary.secret()), what + ": the record holds the secret");
                    });
                }
                assertAll(checks);
            }
        }
    }
}
