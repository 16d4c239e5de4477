package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.testing.ClientHellos;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A {@code network.tunnel} relay over real sockets to a real TLS server (the JDK's) that makes every client with an
 * x25519 key share retry: the second ClientHello after the HelloRetryRequest is judged as the first, a TLS 1.2
 * renegotiation closes the tunnel, and real clients (JDK, curl) still get through. A forwarder in front of the server
 * records every byte the proxy sent it.
 */
class ProxyTunnelHandshakeTest {
    private static final String HOST = "upstream.test";

    @TempDir
    Path dir;

    private TestTls tls;
    private TlsUpstream upstream;
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

    /**
     * Starts the upstream and the proxy tunnelling it; without {@code protocols} the upstream takes only secp384r1
     * key shares, so a client's x25519 share gets a HelloRetryRequest.
     */
    private void start(String... protocols) throws Exception {
        upstream = new TlsUpstream(tls.upstreamServer(HOST), protocols);
        authority = HOST + ":" + upstream.port();
        String policy = "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  tunnel: [\"" + authority
                + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n";
        proxy = ProxyFixture.start(policy, new MemoryAuditSink(), null, Timeouts.defaults(), tls.interception());
    }

    private AuditRecord tunnelClose() throws InterruptedException {
        RecordingUpstream.await(() -> proxy.records().size() >= 2, Duration.ofSeconds(10));
        AuditRecord close = proxy.records().get(1);
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, close.kind());
        return close;
    }

    private SSLSocket jdkClient(Socket tunnel, String... protocols) throws Exception {
        SSLContext ctx = TestTls.clientTrusting(tls.upstreamCa().certificate());
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(tunnel, HOST, tunnel.getPort(), true);
        SSLParameters p = s.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        p.setServerNames(List.of(new javax.net.ssl.SNIHostName(HOST)));
        // x25519 first: the JDK sends its one key share for it, and the server asks again for secp384r1.
        p.setNamedGroups(new String[] {"x25519", "secp256r1", "secp384r1"});
        if (protocols.length > 0) {
            p.setProtocols(protocols);
        }
        s.setSSLParameters(p);
        return s;
    }

    private static String get(SSLSocket s) throws IOException {
        s.getOutputStream().write(("GET / HTTP/1.1\r\nHost: " + HOST + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        String head = TestTls.readHead(s.getInputStream());
        return head + TestTls.readBody(s.getInputStream(), 2);
    }

    @Test
    void aJdkClientGetsThroughAHelloRetryRequest() throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        try (SSLSocket s = jdkClient(c.socket())) {
            s.startHandshake();
            assertEquals("TLSv1.3", s.getSession().getProtocol());
            assertTrue(get(s).endsWith("\r\n\r\nok"));
        }
        assertEquals(2, upstream.clientHellos(), "the server asked again: two ClientHellos reached it");
        assertEquals("allow", tunnelClose().decision());
    }

    @Test
    void curlGetsThroughAHelloRetryRequest() throws Exception {
        Assumptions.assumeTrue(
                "true".equals(System.getenv("CI")) || Files.isExecutable(Path.of("/usr/bin/curl")), "curl is missing");
        start();
        Path ca = dir.resolve("upstream-ca.pem");
        Files.writeString(
                ca,
                "-----BEGIN CERTIFICATE-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                                .encodeToString(tls.upstreamCa().certificate().getEncoded())
                        + "\n-----END CERTIFICATE-----\n");
        // curl (OpenSSL) sends a key share for the first curve only: X25519, which the server does not take.
        Process p = new ProcessBuilder(
                        "curl",
                        "-sS",
                        "--max-time",
                        "20",
                        "--proxy",
                        "http://127.0.0.1:" + proxy.port(),
                        "--proxytunnel",
                        "--cacert",
                        ca.toString(),
                        "--curves",
                        "X25519:P-384",
                        "--resolve",
                        authority + ":127.0.0.1",
                        "https://" + authority + "/")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        assertEquals("ok", out);
        assertEquals(2, upstream.clientHellos(), "the server asked again: two ClientHellos reached it");
        assertEquals("allow", tunnelClose().decision());
    }

    static Stream<Arguments> secondClientHellos() throws Exception {
        byte[] host = HOST.getBytes(StandardCharsets.US_ASCII);
        byte[] other = "other.test".getBytes(StandardCharsets.US_ASCII);
        return Stream.of(
                Arguments.of("another name", ClientHellos.craft("other.test"), 0, "does not match"),
                Arguments.of("no name", ClientHellos.craft(null), 0, "names no server"),
                Arguments.of("two names", ClientHellos.craft(null).names(0, host, other), 0, "more than one server"),
                Arguments.of(
                        "two server_name extensions", ClientHellos.craft(HOST).names(0, other), 0, "extension 0 twice"),
                Arguments.of("a trailing dot", ClientHellos.craft(HOST + "."), 0, "ends with a dot"),
                Arguments.of("another name in 1-byte records", ClientHellos.craft("other.test"), 1, "does not match"),
                Arguments.of(
                        "ECH", ClientHellos.craft(HOST).extension(0xfe0d, new byte[] {1}), 0, "hides its server name"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("secondClientHellos")
    void aSecondClientHelloNamingAnotherServerNeverReachesTheUpstream(
            String name, ClientHellos.Crafted second, int recordSize, String detail) throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        byte[] first = ClientHellos.craft(HOST)
                .groups(ClientHellos.X25519, ClientHellos.SECP384R1)
                .record();
        try (Socket s = c.socket()) {
            s.getOutputStream().write(first);
            byte[] retry = readRecord(s.getInputStream());
            assertArrayEquals(ClientHellos.RETRY_RANDOM, Arrays.copyOfRange(retry, 5 + 4 + 2, 5 + 4 + 2 + 32));

            second.groups(ClientHellos.X25519, ClientHellos.SECP384R1).keyShare(ClientHellos.SECP384R1);
            cookie(retry).ifPresent(second::cookie);
            byte[] m = second.message();
            s.getOutputStream().write(ClientHellos.records(m, recordSize == 0 ? m.length : recordSize));
            s.getOutputStream().flush();

            assertEquals(-1, readPastCompatibilityRecords(s.getInputStream()), "the server answered");
        }
        AuditRecord close = tunnelClose();
        assertEquals("deny", close.decision());
        assertEquals(ProxyReasons.SNI_MISMATCH, close.reason());
        assertTrue(close.error().contains(detail), close.error());
        assertTrue(close.error().contains("second ClientHello"), close.error());
        assertArrayEquals(first, upstream.received(), "the upstream got more than the first ClientHello");
        assertEquals(first.length, close.bytesOut());
    }

    @Test
    void aCraftedSecondClientHelloNamingTheConnectHostGetsTheServerHello() throws Exception {
        start();
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        try (Socket s = c.socket()) {
            s.getOutputStream()
                    .write(ClientHellos.craft(HOST)
                            .groups(ClientHellos.X25519, ClientHellos.SECP384R1)
                            .record());
            byte[] retry = readRecord(s.getInputStream());
            ClientHellos.Crafted second = ClientHellos.craft(HOST)
                    .groups(ClientHellos.X25519, ClientHellos.SECP384R1)
                    .keyShare(ClientHellos.SECP384R1);
            cookie(retry).ifPresent(second::cookie);
            s.getOutputStream().write(second.record());

            byte[] hello = readRecord(s.getInputStream());
            while (hello[0] == 20) {
                hello = readRecord(s.getInputStream());
            }
            assertEquals(22, hello[0]);
            assertEquals(2, hello[5], "a ServerHello");
            assertTrue(!Arrays.equals(ClientHellos.RETRY_RANDOM, Arrays.copyOfRange(hello, 11, 43)), "not a retry");
        }
        assertEquals(2, upstream.clientHellos());
    }

    @Test
    void aTls12TunnelWorksUntilTheClientRenegotiates() throws Exception {
        start("TLSv1.2");
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        try (SSLSocket s = jdkClient(c.socket(), "TLSv1.2")) {
            s.startHandshake();
            assertEquals("TLSv1.2", s.getSession().getProtocol());
            assertTrue(get(s).endsWith("ok"));
            assertTrue(get(s).endsWith("ok"), "a second request on the same connection");

            // A renegotiation's ClientHello is encrypted: the proxy cannot read its server name.
            s.getSession().invalidate();
            assertThrows(IOException.class, () -> {
                s.startHandshake();
                get(s);
            });
        }
        AuditRecord close = tunnelClose();
        assertEquals("deny", close.decision());
        assertEquals(ProxyReasons.TUNNEL_TLS_UNREADABLE, close.reason());
        assertTrue(close.error().contains("renegotiation"), close.error());
        assertEquals(1, upstream.clientHellos(), "the renegotiation's ClientHello reached the upstream");
    }

    /** The cookie extension's data in a HelloRetryRequest record, if it has one. */
    private static java.util.Optional<byte[]> cookie(byte[] record) {
        int at = 5 + 4 + 2 + 32;
        at += 1 + (record[at] & 0xff);
        at += 3;
        int end = at + 2 + u16(record, at);
        at += 2;
        while (at < end) {
            int type = u16(record, at);
            int length = u16(record, at + 2);
            if (type == 44) {
                return java.util.Optional.of(Arrays.copyOfRange(record, at + 4, at + 4 + length));
            }
            at += 4 + length;
        }
        return java.util.Optional.empty();
    }

    private static int u16(byte[] b, int at) {
        return ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
    }

    /** One whole TLS record. */
    private static byte[] readRecord(InputStream in) throws IOException {
        DataInputStream d = new DataInputStream(in);
        byte[] head = new byte[5];
        d.readFully(head);
        byte[] body = new byte[u16(head, 3)];
        d.readFully(body);
        byte[] all = Arrays.copyOf(head, 5 + body.length);
        System.arraycopy(body, 0, all, 5, body.length);
        return all;
    }

    /** Skips ChangeCipherSpec records; the type of the next record, or -1 at the end of the stream. */
    private static int readPastCompatibilityRecords(InputStream in) throws IOException {
        while (true) {
            int type;
            try {
                type = in.read();
            } catch (java.net.SocketException reset) {
                return -1;
            }
            if (type != 20) {
                return type;
            }
            in.readNBytes(5);
        }
    }

    /**
     * A JDK TLS server that takes only secp384r1 key shares, behind a forwarder recording what reached it; it answers
     * every request with {@code ok}.
     */
    static final class TlsUpstream implements AutoCloseable {
        private final SSLServerSocket server;
        private final ServerSocket front;
        private final ByteArrayOutputStream received = new ByteArrayOutputStream();
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        TlsUpstream(SSLContext context, String... protocols) throws IOException {
            InetAddress loopback = InetAddress.getByName("127.0.0.1");
            server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 10, loopback);
            SSLParameters p = server.getSSLParameters();
            if (protocols.length > 0) {
                p.setProtocols(protocols);
            } else {
                // TLS 1.3 only, so a retry is certain (TLS 1.2 with an ECDSA certificate needs its curve offered).
                p.setNamedGroups(new String[] {"secp384r1"});
            }
            server.setSSLParameters(p);
            front = new ServerSocket(0, 10, loopback);
            Thread.ofVirtual().start(this::serve);
            Thread.ofVirtual().start(this::forward);
        }

        int port() {
            return front.getLocalPort();
        }

        byte[] received() {
            synchronized (received) {
                return received.toByteArray();
            }
        }

        /** How many handshake records that start a ClientHello reached the server in the clear. */
        int clientHellos() {
            byte[] b = received();
            int n = 0;
            for (int at = 0; at + 5 <= b.length; at += 5 + u16(b, at + 3)) {
                if (b[at] == 23) {
                    break;
                }
                if (b[at] == 22 && at + 5 < b.length && b[at + 5] == 1) {
                    n++;
                }
            }
            return n;
        }

        private void serve() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    sockets.add(s);
                    Thread.ofVirtual().start(() -> answer(s));
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private void answer(Socket s) {
            try (s) {
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                while (!TestTls.readHead(in).isEmpty()) {
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            } catch (IOException ended) {
                // The client or the proxy closed.
            }
        }

        private void forward() {
            while (!front.isClosed()) {
                try {
                    Socket in = front.accept();
                    Socket out = new Socket(InetAddress.getByName("127.0.0.1"), server.getLocalPort());
                    sockets.add(in);
                    sockets.add(out);
                    Thread.ofVirtual().start(() -> pipe(in, out, true));
                    Thread.ofVirtual().start(() -> pipe(out, in, false));
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private void pipe(Socket from, Socket to, boolean record) {
            byte[] buf = new byte[16384];
            try {
                int n;
                while ((n = from.getInputStream().read(buf)) > 0) {
                    if (record) {
                        synchronized (received) {
                            received.write(buf, 0, n);
                        }
                    }
                    to.getOutputStream().write(buf, 0, n);
                }
            } catch (IOException ended) {
                // One side closed.
            }
            try {
                to.close();
                from.close();
            } catch (IOException ignored) {
                // Closing anyway.
            }
        }

        @Override
        public void close() throws IOException {
            front.close();
            server.close();
            for (Socket s : new ArrayList<>(sockets)) {
                s.close();
            }
        }
    }
}
