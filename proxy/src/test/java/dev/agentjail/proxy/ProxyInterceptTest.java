package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import dev.agentjail.proxy.tls.Interception;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS interception over real sockets and real TLS (corpus section 3): the client trusts only the
 * proxy's CA, the upstream presents a certificate from a separate CA, and every request inside the
 * tunnel is decided and recorded on its own.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyInterceptTest {
    private static final String HOST = "upstream.test";

    @TempDir
    Path dir;

    private TestTls tls;
    private RecordingUpstream upstream;
    private ProxyFixture proxy;
    private String authority;

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

    private void start(String upstreamHost, Interception interception, String extraPolicy) throws Exception {
        upstream = RecordingUpstream.startTls(tls.upstreamServer(upstreamHost), r -> RecordingUpstream.OK);
        authority = HOST + ":" + upstream.port();
        String policy = "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n"
                + extraPolicy.replace("AUTHORITY", authority);
        proxy = ProxyFixture.start(policy, new MemoryAuditSink(), null, Timeouts.defaults(), interception);
    }

    private void start() throws Exception {
        start(HOST, tls.interception(), "");
    }

    private SSLSocket open(String sni) throws Exception {
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        assertEquals("HTTP/1.1 200 Connection established", c.statusLine());
        return TestTls.handshake(
                c.socket(), TestTls.clientTrusting(tls.proxyCa().certificate()), sni, HOST);
    }

    private static String get(SSLSocket s, String path, String host) throws Exception {
        OutputStream out = s.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        String head = TestTls.readHead(in);
        int cl = head.toLowerCase().indexOf("content-length: ");
        if (cl < 0) {
            return head;
        }
        int n = Integer.parseInt(
                head.substring(cl + 16, head.indexOf("\r\n", cl)).strip());
        return head + TestTls.readBody(in, n);
    }

    private List<AuditRecord> awaitRecords(int n) throws InterruptedException {
        RecordingUpstream.await(() -> proxy.records().size() >= n, Duration.ofSeconds(5));
        return proxy.records();
    }

    @Test
    void anInterceptedRequestReachesTheUpstreamAndIsRecordedOnItsOwn() throws Exception {
        start();
        try (SSLSocket s = open(HOST)) {
            X509Certificate presented = (X509Certificate) s.getSession().getPeerCertificates()[0];
            assertEquals(tls.proxyCa().certificate().getSubjectX500Principal(), presented.getIssuerX500Principal());

            String response = get(s, "/v1/messages?q=1", authority);

            assertTrue(response.startsWith("HTTP/1.1 200"), response);
            assertTrue(response.endsWith(RecordingUpstream.OK_BODY), response);
        }
        assertEquals(1, upstream.requests().size());
        assertEquals("GET /v1/messages?q=1 HTTP/1.1", upstream.requests().get(0).requestLine());
        assertEquals(List.of(authority), upstream.requests().get(0).headers("host"));

        List<AuditRecord> records = awaitRecords(3);
        AuditRecord connect = records.get(0);
        assertEquals("CONNECT", connect.method());
        assertEquals(AuditRecord.TLS_INTERCEPT, connect.tls());
        AuditRecord inner = records.get(1);
        assertEquals("GET", inner.method());
        assertEquals("https", inner.scheme());
        assertEquals(HOST, inner.host());
        assertEquals("/v1/messages", inner.path());
        assertEquals(200, inner.status());
        assertEquals("allow", inner.decision());
        assertEquals(AuditRecord.TLS_INTERCEPT, inner.tls());
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, records.get(2).kind());
        assertEquals("allow", records.get(2).decision());
    }

    @Test
    void keepAliveRequestsInOneTunnelAreEachDecidedAndRecorded() throws Exception {
        start();
        try (SSLSocket s = open(HOST)) {
            assertTrue(get(s, "/one", authority).startsWith("HTTP/1.1 200"));
            assertTrue(get(s, "/two", authority).startsWith("HTTP/1.1 200"));
        }
        assertEquals(2, upstream.requests().size());
        assertEquals(1, upstream.connections(), "the upstream connection is reused");
        List<AuditRecord> records = awaitRecords(4);
        assertEquals("/one", records.get(1).path());
        assertEquals("/two", records.get(2).path());
    }

    @Test
    void caseFiftyFiveAnotherHostInsideTheTunnelIsDeniedAndClosesIt() throws Exception {
        start();
        try (SSLSocket s = open(HOST)) {
            assertTrue(get(s, "/ok", authority).startsWith("HTTP/1.1 200"));
            String denied = get(s, "/steal", "evil.test");
            assertTrue(denied.startsWith("HTTP/1.1 403"), denied);
            assertTrue(denied.contains(ProxyReasons.HEADER + ": " + ProxyReasons.TUNNEL_HOST_MISMATCH), denied);
            assertEquals(-1, s.getInputStream().read(), "the tunnel is closed after a fronting attempt");
        }
        assertEquals(1, upstream.requests().size(), "only the first request reached the upstream");
        AuditRecord deny = awaitRecords(3).get(2);
        assertEquals("deny", deny.decision());
        assertEquals(ProxyReasons.TUNNEL_HOST_MISMATCH, deny.reason());
        assertEquals("evil.test", deny.host());
    }

    @Test
    void caseFiftyFourAnSniNamingAnotherHostFailsTheHandshake() throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        SSLContext client = TestTls.clientTrusting(tls.proxyCa().certificate());
        assertThrows(SSLException.class, () -> TestTls.handshake(c.socket(), client, "evil.test", "evil.test"));
        c.socket().close();
        // The upstream was dialled when the CONNECT was allowed (its TLS handshake runs alongside the client's);
        // what matters is that no request byte reached it.
        assertEquals(0, upstream.requests().size());
        assertTrue(upstream.received().isEmpty(), upstream.received());
        List<AuditRecord> records = awaitRecords(2);
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, records.get(1).kind());
        assertEquals("deny", records.get(1).decision());
        assertEquals(ProxyReasons.SNI_MISMATCH, records.get(1).reason());
    }

    @Test
    void caseFiftyThreeNoSniGetsTheConnectHostsCertificate() throws Exception {
        start();
        try (SSLSocket s = open(null)) {
            assertTrue(get(s, "/", authority).startsWith("HTTP/1.1 200"));
        }
    }

    @Test
    void caseFiftyOneNonTlsBytesInAnInterceptedTunnelCloseIt() throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        try (var s = c.socket()) {
            s.getOutputStream()
                    .write("GET / HTTP/1.1\r\nHost: upstream.test\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            byte[] rest = s.getInputStream().readAllBytes();
            assertTrue(new String(rest, StandardCharsets.ISO_8859_1).indexOf("200") < 0, "no HTTP answer");
        }
        assertEquals(0, upstream.requests().size());
        AuditRecord close = awaitRecords(2).get(1);
        assertEquals(ProxyReasons.CLIENT_TLS_FAILED, close.reason());
        assertEquals("error", close.decision());
    }

    @Test
    void caseFiftyEightAnUntrustedUpstreamGets502AndNothingIsDelivered() throws Exception {
        X509Certificate stranger = tls.proxyCa().certificate();
        start(HOST, tls.interception(List.of(stranger)), "");
        try (SSLSocket s = open(HOST)) {
            String response = get(s, "/secret-path", authority);
            assertTrue(response.startsWith("HTTP/1.1 502"), response);
            assertTrue(response.contains(ProxyReasons.HEADER + ": " + ProxyReasons.UPSTREAM_TLS_FAILED), response);
        }
        assertEquals(0, upstream.requests().size());
        assertTrue(upstream.received().isEmpty(), "no request byte reached the upstream");
        AuditRecord inner = awaitRecords(2).get(1);
        assertEquals(ProxyReasons.UPSTREAM_TLS_FAILED, inner.reason());
        assertEquals(502, inner.status());
    }

    @Test
    void caseFiftyEightAnUpstreamCertificateForAnotherNameGets502() throws Exception {
        start("other.test", tls.interception(), "");
        try (SSLSocket s = open(HOST)) {
            String response = get(s, "/", authority);
            assertTrue(response.startsWith("HTTP/1.1 502"), response);
        }
        assertEquals(0, upstream.requests().size());
    }

    @Test
    void aTunnelledHostIsRelayedUntouched() throws Exception {
        start(HOST, tls.interception(), "  tunnel: [\"AUTHORITY\"]\n");
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        assertEquals("HTTP/1.1 200 Connection established", c.statusLine());
        // The client now talks TLS with the upstream itself: it must trust the upstream's CA, not ours.
        try (SSLSocket s = TestTls.handshake(
                c.socket(), TestTls.clientTrusting(tls.upstreamCa().certificate()), HOST, HOST)) {
            assertTrue(get(s, "/raw", authority).startsWith("HTTP/1.1 200"));
        }
        AuditRecord connect = awaitRecords(1).get(0);
        assertEquals(AuditRecord.TLS_TUNNEL, connect.tls());
    }

    @Test
    void aTunnelThatFrontsForAnotherNameIsClosedBeforeAnyByteReachesTheUpstream() throws Exception {
        start(HOST, tls.interception(), "  tunnel: [\"AUTHORITY\"]\n");
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        assertEquals("HTTP/1.1 200 Connection established", c.statusLine());

        // The client asks the allowed host's servers for another name they may also serve.
        assertThrows(
                java.io.IOException.class,
                () -> TestTls.handshake(
                        c.socket(), TestTls.clientTrusting(tls.upstreamCa().certificate()), "other.test", HOST));

        List<AuditRecord> records = awaitRecords(2);
        AuditRecord close = records.get(1);
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, close.kind());
        assertEquals("deny", close.decision());
        assertEquals(ProxyReasons.SNI_MISMATCH, close.reason());
        assertEquals(0, close.bytesOut(), "client bytes reached the upstream");
        assertEquals(0, upstream.requests().size());
    }

    @Test
    void theJdkHttpClientWorksThroughInterceptionTrustingOnlyTheProxyCa() throws Exception {
        start();
        HttpClient client = HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxy.port())))
                .sslContext(TestTls.clientTrusting(tls.proxyCa().certificate()))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        HttpResponse<String> response = client.send(
                HttpRequest.newBuilder(URI.create("https://" + authority + "/jdk"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        assertEquals(RecordingUpstream.OK_BODY, response.body());
        assertEquals("GET /jdk HTTP/1.1", upstream.requests().get(0).requestLine());
    }

    @Test
    void serverSentEventsStreamThroughInterceptionEventByEvent() throws Exception {
        start();
        upstream.close();
        java.util.concurrent.CountDownLatch firstSeen = new java.util.concurrent.CountDownLatch(1);
        try (javax.net.ssl.SSLServerSocket sse = (javax.net.ssl.SSLServerSocket) tls.upstreamServer(HOST)
                .getServerSocketFactory()
                .createServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            authority = HOST + ":" + sse.getLocalPort();
            proxy.close();
            proxy = ProxyFixture.start(
                    "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n",
                    new MemoryAuditSink(),
                    null,
                    Timeouts.defaults(),
                    tls.interception());
            Thread server = Thread.ofPlatform().daemon().start(() -> {
                try (var conn = sse.accept()) {
                    TestTls.readHead(conn.getInputStream());
                    OutputStream out = conn.getOutputStream();
                    out.write(
                            ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                                            + "d\r\ndata: first\n\n\r\n")
                                    .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    // The rest of the stream waits until the client has seen the first event.
                    firstSeen.await(10, java.util.concurrent.TimeUnit.SECONDS);
                    out.write("c\r\ndata: last\n\n\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    conn.getInputStream().read();
                } catch (Exception e) {
                    // the test's assertions report what went wrong
                }
            });
            try (SSLSocket s = open(HOST)) {
                s.getOutputStream()
                        .write(("GET /events HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                InputStream in = s.getInputStream();
                String head = TestTls.readHead(in);
                assertTrue(head.startsWith("HTTP/1.1 200"), head);
                StringBuilder seen = new StringBuilder();
                while (!seen.toString().contains("data: first")) {
                    int c = in.read();
                    assertTrue(c >= 0, "stream ended before the first event: " + seen);
                    seen.append((char) c);
                }
                assertEquals(1, firstSeen.getCount(), "the first event arrived while the upstream held the rest");
                firstSeen.countDown();
                while (!seen.toString().contains("data: last")) {
                    int c = in.read();
                    assertTrue(c >= 0, "stream ended before the last event: " + seen);
                    seen.append((char) c);
                }
            }
            server.join(5000);
        }
    }

    @Test
    void aWebSocketUpgradeIsDecidedRecordedAndRelayedForARealClient() throws Exception {
        start();
        upstream.close();
        try (javax.net.ssl.SSLServerSocket ws = (javax.net.ssl.SSLServerSocket) tls.upstreamServer(HOST)
                .getServerSocketFactory()
                .createServerSocket(0, 4, java.net.InetAddress.getByName("127.0.0.1"))) {
            authority = HOST + ":" + ws.getLocalPort();
            proxy.close();
            proxy = ProxyFixture.start(
                    "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n",
                    new MemoryAuditSink(),
                    null,
                    Timeouts.defaults(),
                    tls.interception());
            Thread.ofPlatform().daemon().start(() -> serveOneWebSocketEcho(ws));
            HttpClient client = HttpClient.newBuilder()
                    .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxy.port())))
                    .sslContext(TestTls.clientTrusting(tls.proxyCa().certificate()))
                    .build();
            java.util.concurrent.CompletableFuture<String> echoed = new java.util.concurrent.CompletableFuture<>();
            java.net.http.WebSocket socket = client.newWebSocketBuilder()
                    .buildAsync(URI.create("wss://" + authority + "/ws"), new java.net.http.WebSocket.Listener() {
                        @Override
                        public java.util.concurrent.CompletionStage<?> onText(
                                java.net.http.WebSocket webSocket, CharSequence data, boolean last) {
                            echoed.complete(data.toString());
                            return null;
                        }
                    })
                    .get(10, java.util.concurrent.TimeUnit.SECONDS);
            socket.sendText("hello through the jail", true).get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals("hello through the jail", echoed.get(10, java.util.concurrent.TimeUnit.SECONDS));
            socket.abort();
        }
        List<AuditRecord> records = awaitRecords(3);
        AuditRecord upgrade = records.get(1);
        assertEquals("GET", upgrade.method());
        assertEquals("/ws", upgrade.path());
        assertEquals(101, upgrade.status());
        assertEquals("allow", upgrade.decision());
        RecordingUpstream.await(
                () -> proxy.records().stream()
                                .filter(r -> r.kind().equals(AuditRecord.KIND_TUNNEL_CLOSE))
                                .count()
                        >= 2,
                Duration.ofSeconds(5));
        assertTrue(
                proxy.records().stream()
                        .anyMatch(r -> r.kind().equals(AuditRecord.KIND_TUNNEL_CLOSE)
                                && r.status() == 101
                                && r.bytesOut() > 0),
                proxy.records().toString());
    }

    @Test
    void anUpgradeToAnotherProtocolIsStrippedNotSwitched() throws Exception {
        start();
        try (SSLSocket s = open(HOST)) {
            OutputStream out = s.getOutputStream();
            out.write(("GET / HTTP/1.1\r\nHost: " + authority
                            + "\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"
                            + "Connection: Upgrade, HTTP2-Settings\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertTrue(TestTls.readHead(s.getInputStream()).startsWith("HTTP/1.1 200"));
        }
        RecordingUpstream.RecordedRequest got = upstream.requests().get(0);
        assertEquals(List.of(), got.headers("upgrade"));
        assertEquals(List.of(), got.headers("http2-settings"));
    }

    /** A one-message WebSocket echo: accepts the handshake, unmasks one short text frame and sends it back. */
    private static void serveOneWebSocketEcho(javax.net.ssl.SSLServerSocket server) {
        try (var conn = server.accept()) {
            InputStream in = conn.getInputStream();
            String head = TestTls.readHead(in);
            String key = head.lines()
                    .filter(l -> l.toLowerCase().startsWith("sec-websocket-key:"))
                    .findFirst()
                    .orElseThrow()
                    .substring(18)
                    .strip();
            String accept = java.util.Base64.getEncoder()
                    .encodeToString(java.security.MessageDigest.getInstance("SHA-1")
                            .digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
                                    .getBytes(StandardCharsets.US_ASCII)));
            OutputStream out = conn.getOutputStream();
            out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Accept: " + accept + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            int b0 = in.read();
            int len = in.read() & 0x7f;
            byte[] mask = in.readNBytes(4);
            byte[] payload = in.readNBytes(len);
            for (int i = 0; i < len; i++) {
                payload[i] ^= mask[i % 4];
            }
            out.write(new byte[] {(byte) b0, (byte) len});
            out.write(payload);
            out.flush();
            in.read();
        } catch (Exception e) {
            // the client side's assertions report the failure
        }
    }

    @Test
    void caseOneFourteenAnOversizedClientHelloIsCutOffNotBuffered() throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        try (var s = c.socket()) {
            OutputStream out = s.getOutputStream();
            // A handshake record whose ClientHello claims 16 MB: far past the 16 KiB the proxy will buffer.
            out.write(new byte[] {0x16, 0x03, 0x01, 0x40, 0x00, 0x01, (byte) 0xff, (byte) 0xff, (byte) 0xff});
            byte[] filler = new byte[4096];
            try {
                for (int i = 0; i < 16; i++) {
                    out.write(filler);
                }
                out.flush();
            } catch (java.io.IOException closedWhileWriting) {
                // The proxy may already have closed the connection: that is the point.
            }
            assertEquals(-1, readUntilClosed(s.getInputStream()), "the proxy closes the connection");
        }
        assertTrue(upstream.requests().isEmpty());
        AuditRecord close = awaitRecords(2).get(1);
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, close.kind());
        assertEquals(ProxyReasons.CLIENT_TLS_FAILED, close.reason());
    }

    @Test
    void caseFiftyOneATlsAlertIsNotAClientHelloAndClosesTheTunnel() throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        try (var s = c.socket()) {
            s.getOutputStream().write(new byte[] {0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28});
            s.getOutputStream().flush();
            assertEquals(-1, readUntilClosed(s.getInputStream()));
        }
        assertTrue(upstream.requests().isEmpty());
        assertEquals(ProxyReasons.CLIENT_TLS_FAILED, awaitRecords(2).get(1).reason());
    }

    /** Reads and drops whatever comes (a TLS alert, say) until the peer closes; returns the final read. */
    private static int readUntilClosed(InputStream in) throws Exception {
        int b;
        try {
            while ((b = in.read()) >= 0) {
                // drain
            }
        } catch (java.net.SocketException reset) {
            return -1;
        }
        return b;
    }

    @Test
    void caseFiftyNineAClientThatPinsItsOwnCaFailsClosedAndIsRecorded() throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        // This client trusts only the upstream's CA, as a pinning client would: our certificate is refused.
        SSLContext pinned = TestTls.clientTrusting(tls.upstreamCa().certificate());
        assertThrows(SSLException.class, () -> TestTls.handshake(c.socket(), pinned, HOST, HOST));
        c.socket().close();
        assertTrue(upstream.requests().isEmpty(), "no fallback to an uninspected tunnel");
        AuditRecord close = awaitRecords(2).get(1);
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, close.kind());
        assertEquals(ProxyReasons.CLIENT_TLS_FAILED, close.reason());
    }
}
