package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.testing.ClientHellos;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RecordingUpstream;
import dev.agentjail.proxy.testing.TestTls;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Interception over real sockets: the proxy's own TLS server answers a ClientHello without a key share with a
 * HelloRetryRequest, and the second ClientHello must name the CONNECT host as the first did (its TLS server reads
 * only the first one's name).
 */
class ProxyInterceptHelloRetryTest {
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
        upstream = RecordingUpstream.startTls(tls.upstreamServer(HOST), r -> RecordingUpstream.OK);
        authority = HOST + ":" + upstream.port();
        String policy =
                "version: 1\nnetwork:\n  allow: [\"" + authority + "\"]\n  resolve: {" + HOST + ": 127.0.0.1}\n";
        proxy = ProxyFixture.start(policy, new MemoryAuditSink(), null, Timeouts.defaults(), tls.interception());
    }

    @AfterEach
    void tearDown() throws Exception {
        proxy.close();
        upstream.close();
        tls.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"other.test", HOST})
    void theSecondClientHelloAfterTheProxysHelloRetryRequestMustNameTheConnectHost(String secondName) throws Exception {
        TestTls.Connected c = TestTls.connect(proxy.port(), authority);
        int answer;
        try (Socket s = c.socket()) {
            s.getOutputStream().write(ClientHellos.craft(HOST).emptyKeyShare().record());
            byte[] retry = readRecord(s.getInputStream());
            assertEquals(22, retry[0]);
            assertArrayEquals(ClientHellos.RETRY_RANDOM, Arrays.copyOfRange(retry, 11, 43), "no HelloRetryRequest");

            s.getOutputStream().write(ClientHellos.craft(secondName).record());
            s.getOutputStream().flush();
            answer = nextRecordType(s.getInputStream());
        }
        if (secondName.equals(HOST)) {
            assertEquals(22, answer, "the ServerHello");
            return;
        }
        assertEquals(-1, answer, "the proxy went on with a ClientHello naming another server");
        RecordingUpstream.await(() -> proxy.records().size() >= 2, Duration.ofSeconds(10));
        AuditRecord close = proxy.records().get(1);
        assertEquals(AuditRecord.KIND_TUNNEL_CLOSE, close.kind());
        assertEquals("deny", close.decision());
        assertEquals(ProxyReasons.SNI_MISMATCH, close.reason());
        assertTrue(close.error().contains("second ClientHello"), close.error());
    }

    private static byte[] readRecord(InputStream in) throws IOException {
        DataInputStream d = new DataInputStream(in);
        byte[] head = new byte[5];
        d.readFully(head);
        byte[] all = Arrays.copyOf(head, 5 + (((head[3] & 0xff) << 8) | (head[4] & 0xff)));
        d.readFully(all, 5, all.length - 5);
        return all;
    }

    /** The type of the next record that is no ChangeCipherSpec, or -1 when the connection ends first. */
    private static int nextRecordType(InputStream in) throws IOException {
        try {
            while (true) {
                byte[] r = readRecord(in);
                if (r[0] != 20) {
                    return r[0];
                }
            }
        } catch (java.io.EOFException | java.net.SocketException closed) {
            return -1;
        }
    }
}
