package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.WsFrames.BINARY;
import static dev.agentjail.proxy.testing.WsFrames.CONTINUATION;
import static dev.agentjail.proxy.testing.WsFrames.PING;
import static dev.agentjail.proxy.testing.WsFrames.TEXT;
import static dev.agentjail.proxy.testing.WsFrames.client;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import dev.agentjail.proxy.testing.WsFrames;
import dev.agentjail.proxy.testing.WsUpstream;
import dev.agentjail.proxy.ws.Handshake;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket frames through the real proxy with real TLS interception: the JDK's WebSocket client and hand-built frames
 * over a TLS socket on one side, a real WebSocket server (Netty's codec, permessage-deflate) or a scripted one on the
 * other; each test asserts what arrived upstream and what the client got back.
 */
@ExtendWith(NettyLeakGuard.class)
class ProxyWebSocketTest {
    private static final String HOST = "upstream.test";
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    private static final String PLACEHOLDER = "agentjail-placeholder-0123456789abcdef0123456789abcdef";
    private static final String REAL_KEY = "real-upstream-key-9f8e7d6c5b4a";

    @TempDir
    Path dir;

    private TestTls tls;
    private WsUpstream upstream;
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

    /** A Netty WebSocket upstream that answers "leak" with the real credential (an echoing endpoint). */
    private void startNetty() throws Exception {
        upstream = new WsUpstream(tls.upstreamServer(HOST), text -> text.equals("leak") ? "key=" + REAL_KEY : null);
        startProxy(upstream.port(), "");
    }

    private void startProxy(int port, String redaction) throws Exception {
        authority = HOST + ":" + port;
        String policy = "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n"
                + redaction;
        InjectedCredential credential = new InjectedCredential(
                new CredentialRule("UPSTREAM_KEY", null, List.of(new Target(HOST, HostKind.DNS, port)), "x-api-key"),
                PLACEHOLDER,
                REAL_KEY);
        proxy = ProxyFixture.start(
                policy,
                new MemoryAuditSink(),
                null,
                Timeouts.defaults(),
                tls.interception(),
                Map.of(),
                List.of(credential));
    }

    private HttpClient jdkClient() throws Exception {
        return HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxy.port())))
                .sslContext(TestTls.clientTrusting(tls.proxyCa().certificate()))
                .build();
    }

    /** What a JDK WebSocket client heard: messages as TEXT:/BINARY:, and CLOSE:code:reason. */
    private static final class Heard implements WebSocket.Listener {
        final LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                events.add("TEXT:" + text);
                text.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            events.add("BINARY:" + new String(b, StandardCharsets.UTF_8));
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
            events.add("CLOSE:" + code + ":" + reason);
            return null;
        }

        String next() throws InterruptedException {
            return events.poll(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aJdkClientsFragmentedSecretIsRedactedUpstreamAndTheCredentialNeverComesBack() throws Exception {
        startNetty();
        Heard heard = new Heard();
        WebSocket ws = jdkClient()
                .newWebSocketBuilder()
                .header("x-api-key", PLACEHOLDER)
                .buildAsync(URI.create("wss://" + authority + "/ws"), heard)
                .get(10, TimeUnit.SECONDS);
        // The secret split across two fragments (two frames on the wire).
        ws.sendText("{\"prompt\":\"my token " + PAT.substring(0, 20), false).get(10, TimeUnit.SECONDS);
        ws.sendText(PAT.substring(20) + " ok\"}", true).get(10, TimeUnit.SECONDS);
        String arrived = upstream.take(10);
        assertNotNull(arrived, "nothing arrived upstream");
        assertFalse(arrived.contains(PAT), arrived);
        assertTrue(arrived.startsWith("TEXT:{\"prompt\":\"my token [REDACTED:github-pat"), arrived);
        assertEquals(("TEXT:{\"prompt\":\"my token " + PAT + " ok\"}").length(), arrived.length());

        ws.sendText("leak", true).get(10, TimeUnit.SECONDS);
        assertEquals("TEXT:leak", upstream.take(10));
        String text = heard.next();
        String binary = heard.next();
        assertEquals("TEXT:key=" + PLACEHOLDER.substring(0, REAL_KEY.length()), text);
        assertEquals("BINARY:key=" + PLACEHOLDER.substring(0, REAL_KEY.length()), binary);
        ws.sendClose(1000, "bye").get(10, TimeUnit.SECONDS);
        assertTrue(heard.next().startsWith("CLOSE:1000"));

        AuditRecord close = awaitTunnelClose();
        assertEquals("allow", close.decision());
        assertEquals(101, close.status());
        assertTrue(
                close.redactions().stream()
                        .anyMatch(r ->
                                r.kind().equals("github-pat") && r.location().equals("websocket-text")),
                close.toString());
        assertEquals(3, close.websocket().messagesOut(), close.toString()); // two texts and the close
        assertTrue(close.websocket().messagesIn() >= 2, close.toString());
    }

    @Test
    void aBinaryMessageWithASecretClosesTheClientWith1008AndNeverArrives() throws Exception {
        startNetty();
        Heard heard = new Heard();
        WebSocket ws = jdkClient()
                .newWebSocketBuilder()
                .buildAsync(URI.create("wss://" + authority + "/ws"), heard)
                .get(10, TimeUnit.SECONDS);
        ws.sendBinary(ByteBuffer.wrap(("\u0000\u0001" + PAT).getBytes(StandardCharsets.UTF_8)), true)
                .get(10, TimeUnit.SECONDS);
        assertEquals("CLOSE:1008:websocket-secret-blocked", heard.next());
        String arrived = upstream.take(2);
        assertTrue(arrived == null || !arrived.startsWith("BINARY"), arrived);
        AuditRecord close = awaitTunnelClose();
        assertEquals("deny", close.decision());
        assertEquals(ProxyReasons.WEBSOCKET_SECRET_BLOCKED, close.reason());
        assertEquals("websocket-binary", close.redactions().get(0).location());
    }

    @Test
    void compressedFragmentsWithAPingBetweenAreInflatedRedactedAndRecompressedForARealServer() throws Exception {
        startNetty();
        try (SSLSocket s = upgrade("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")) {
            OutputStream out = s.getOutputStream();
            Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
            byte[] z = WsFrames.deflate(deflater, ("{\"p\":\"" + PAT + "\"}").getBytes(StandardCharsets.UTF_8));
            int cut = z.length / 2;
            // Each frame in its own TCP write, a ping between the fragments, RSV1 on the first frame only.
            for (byte[] frame : List.of(
                    client(false, 4, TEXT, Arrays.copyOfRange(z, 0, cut)),
                    client(true, 0, PING, "hi".getBytes(StandardCharsets.UTF_8)),
                    client(true, 0, CONTINUATION, Arrays.copyOfRange(z, cut, z.length)))) {
                out.write(frame);
                out.flush();
                Thread.sleep(20);
            }
            String arrived = upstream.take(10);
            assertNotNull(arrived);
            assertFalse(arrived.contains(PAT), arrived);
            assertTrue(arrived.startsWith("TEXT:{\"p\":\"[REDACTED:github-pat"), arrived);
            // The server's pong, then a compressed answer inflates to the scrubbed value.
            out.write(WsFrames.clientText("leak"));
            out.flush();
            Inflater inflater = new Inflater(true);
            InputStream in = s.getInputStream();
            WsFrames.Frame f = WsFrames.read(in);
            if (f.opcode() == 10) {
                assertEquals("hi", f.text());
                f = WsFrames.read(in);
            }
            assertFalse(f.masked());
            assertEquals(4, f.rsv(), "the answer is compressed as negotiated");
            String answer = new String(WsFrames.inflate(inflater, f.payload()), StandardCharsets.UTF_8);
            assertEquals("key=" + PLACEHOLDER.substring(0, REAL_KEY.length()), answer);
        }
    }

    @Test
    void anUnmaskedClientFrameGets1002AndNothingArrives() throws Exception {
        startNetty();
        try (SSLSocket s = upgrade("")) {
            s.getOutputStream().write(WsFrames.server(true, 0, TEXT, ("x " + PAT).getBytes(StandardCharsets.UTF_8)));
            s.getOutputStream().flush();
            WsFrames.Frame f = WsFrames.read(s.getInputStream());
            assertEquals(8, f.opcode());
            assertEquals(1002, f.closeCode());
            assertEquals("websocket-protocol-error", f.closeReason());
        }
        String arrived = upstream.take(2);
        assertTrue(arrived == null || !arrived.startsWith("TEXT"), arrived);
        assertEquals(ProxyReasons.WEBSOCKET_PROTOCOL_ERROR, awaitTunnelClose().reason());
    }

    @Test
    void aCompressedBombIsCutOffWith1009() throws Exception {
        startNetty();
        try (SSLSocket s = upgrade("Sec-WebSocket-Extensions: permessage-deflate\r\n")) {
            byte[] z = WsFrames.deflate(
                    new Deflater(Deflater.BEST_COMPRESSION, true),
                    new byte[dev.agentjail.proxy.ws.WebSocketPipeline.MAX_MESSAGE + 1]);
            s.getOutputStream().write(client(true, 4, BINARY, z));
            s.getOutputStream().flush();
            WsFrames.Frame f = WsFrames.read(s.getInputStream());
            assertEquals(1009, f.closeCode());
        }
        assertEquals(ProxyReasons.WEBSOCKET_MESSAGE_TOO_BIG, awaitTunnelClose().reason());
    }

    // ---- the handshake, against a scripted upstream ----

    @Test
    void theOfferKeepsOnlyReadableExtensionsAndTheHeadIsRedacted() throws Exception {
        LinkedBlockingQueue<String> heads = new LinkedBlockingQueue<>();
        try (SSLServerSocket server = scripted(conn -> {
            String head = TestTls.readHead(conn.getInputStream());
            heads.add(head);
            conn.getOutputStream().write(accept(head, "X-Echo: " + REAL_KEY + "\r\n"));
            conn.getOutputStream().flush();
        })) {
            startProxy(server.getLocalPort(), "");
            try (SSLSocket s = upgrade("Sec-WebSocket-Extensions: x-webkit-deflate-frame, permessage-deflate; foo=1,"
                    + " permessage-deflate; client_max_window_bits\r\nSec-WebSocket-Protocol: chat, " + PAT
                    + "\r\n")) {
                String head = heads.poll(10, TimeUnit.SECONDS).toLowerCase();
                assertTrue(
                        head.contains("sec-websocket-extensions: permessage-deflate; client_max_window_bits\r\n"),
                        head);
                assertFalse(head.contains("x-webkit") || head.contains("foo=1"), head);
                assertFalse(head.contains(PAT.toLowerCase()), head);
            }
        }
        assertFalse(lastSwitch.contains(REAL_KEY), lastSwitch);
        assertTrue(lastSwitch.contains("X-Echo: " + PLACEHOLDER.substring(0, REAL_KEY.length())), lastSwitch);
    }

    @Test
    void a101ChoosingAnExtensionThatWasNotOfferedIsRefused() throws Exception {
        try (SSLServerSocket server = scripted(conn -> {
            String head = TestTls.readHead(conn.getInputStream());
            conn.getOutputStream().write(accept(head, "Sec-WebSocket-Extensions: permessage-deflate\r\n"));
            conn.getOutputStream().flush();
        })) {
            startProxy(server.getLocalPort(), "");
            try (SSLSocket s = open()) {
                s.getOutputStream().write(upgradeHead("").getBytes(StandardCharsets.ISO_8859_1));
                s.getOutputStream().flush();
                String head = TestTls.readHead(s.getInputStream());
                assertTrue(head.startsWith("HTTP/1.1 502"), head);
                assertTrue(head.contains(ProxyReasons.WEBSOCKET_HANDSHAKE_REFUSED), head);
            }
        }
    }

    @Test
    void a101ToARequestThatAskedForNoUpgradeIsRefused() throws Exception {
        try (SSLServerSocket server = scripted(conn -> {
            TestTls.readHead(conn.getInputStream());
            conn.getOutputStream()
                    .write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
            conn.getOutputStream().flush();
        })) {
            startProxy(server.getLocalPort(), "");
            try (SSLSocket s = open()) {
                s.getOutputStream()
                        .write(("GET /ws HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                assertTrue(TestTls.readHead(s.getInputStream()).startsWith("HTTP/1.1 502"));
            }
        }
    }

    // ---- helpers ----

    private String lastSwitch = "";

    private SSLSocket open() throws Exception {
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        return TestTls.handshake(
                c.socket(), TestTls.clientTrusting(tls.proxyCa().certificate()), HOST, HOST);
    }

    private String upgradeHead(String extra) {
        return "GET /ws HTTP/1.1\r\nHost: " + authority + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" + extra + "\r\n";
    }

    /** An intercepted connection upgraded to a WebSocket (the 101 read and kept in {@link #lastSwitch}). */
    private SSLSocket upgrade(String extraHeaders) throws Exception {
        SSLSocket s = open();
        s.getOutputStream().write(upgradeHead(extraHeaders).getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
        lastSwitch = TestTls.readHead(s.getInputStream());
        assertTrue(lastSwitch.startsWith("HTTP/1.1 101"), lastSwitch);
        return s;
    }

    private static byte[] accept(String requestHead, String extra) {
        String key = requestHead
                .lines()
                .filter(l -> l.toLowerCase().startsWith("sec-websocket-key:"))
                .findFirst()
                .orElseThrow()
                .substring(18)
                .strip();
        return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
                        + Handshake.accept(key) + "\r\n" + extra + "\r\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    private interface Script {
        void run(java.net.Socket conn) throws Exception;
    }

    /** A TLS server that runs {@code script} on its first connection, then holds it open briefly. */
    private SSLServerSocket scripted(Script script) throws Exception {
        SSLServerSocket server = (SSLServerSocket) tls.upstreamServer(HOST)
                .getServerSocketFactory()
                .createServerSocket(0, 4, java.net.InetAddress.getByName("127.0.0.1"));
        Thread.ofPlatform().daemon().start(() -> {
            try (var conn = server.accept()) {
                script.run(conn);
                conn.getInputStream().read();
            } catch (Exception e) {
                // the client side's assertions report the failure
            }
        });
        return server;
    }

    private AuditRecord awaitTunnelClose() throws Exception {
        RecordingUpstream.await(
                () -> proxy.records().stream()
                        .anyMatch(r -> r.kind().equals(AuditRecord.KIND_TUNNEL_CLOSE) && r.status() == 101),
                Duration.ofSeconds(10));
        return proxy.records().stream()
                .filter(r -> r.kind().equals(AuditRecord.KIND_TUNNEL_CLOSE) && r.status() == 101)
                .findFirst()
                .orElseThrow();
    }
}
