package dev.agentjail.certs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real TLS over loopback with the JDK: a client that trusts only our CA accepts a minted leaf for the right name. */
class TlsHandshakeTest {
    static final char[] PASSWORD = "unused".toCharArray();

    @TempDir
    Path tmp;

    CertificateAuthority ca;
    LeafCertificates leaves;
    ExecutorService pool;

    @BeforeEach
    void setUp() throws Exception {
        ca = CertificateAuthority.loadOrCreate(tmp.resolve("ca"), Clock.systemUTC());
        pool = Executors.newCachedThreadPool();
        leaves = new LeafCertificates(ca, Clock.systemUTC(), pool);
    }

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Test
    void aClientTrustingOnlyTheCaAcceptsTheLeafForItsHost() throws Exception {
        LeafCertificate leaf = leaves.forHost("same.test").get(30, TimeUnit.SECONDS);
        try (Server server = new Server(leaf)) {
            X509Certificate seen = connect(server, "same.test", trustOnly(ca));
            assertEquals(leaf.certificate(), seen);
            assertEquals(List.of(new SNIHostName("same.test")), server.requestedNames.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aWrongHostNameFails() throws Exception {
        LeafCertificate leaf = leaves.forHost("same.test").get(30, TimeUnit.SECONDS);
        try (Server server = new Server(leaf)) {
            assertThrows(SSLHandshakeException.class, () -> connect(server, "other.test", trustOnly(ca)));
        }
    }

    @Test
    void aClientTrustingAnotherCaFails() throws Exception {
        CertificateAuthority other = CertificateAuthority.loadOrCreate(tmp.resolve("other"), Clock.systemUTC());
        LeafCertificate leaf = leaves.forHost("same.test").get(30, TimeUnit.SECONDS);
        try (Server server = new Server(leaf)) {
            assertThrows(SSLHandshakeException.class, () -> connect(server, "same.test", trustOnly(other)));
        }
    }

    @Test
    void anIpLiteralLeafPassesHttpsIdentificationForThatAddress() throws Exception {
        LeafCertificate leaf = leaves.forHost("127.0.0.1").get(30, TimeUnit.SECONDS);
        try (Server server = new Server(leaf)) {
            assertEquals(leaf.certificate(), connect(server, "127.0.0.1", trustOnly(ca)));
        }
        LeafCertificate named = leaves.forHost("localhost").get(30, TimeUnit.SECONDS);
        try (Server server = new Server(named)) {
            assertThrows(SSLHandshakeException.class, () -> connect(server, "127.0.0.1", trustOnly(ca)));
        }
    }

    static SSLContext trustOnly(CertificateAuthority authority) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("agentjail-ca", authority.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }

    /** Connects over loopback as if to {@code host}: SNI and HTTPS endpoint identification on that name. */
    static X509Certificate connect(Server server, String host, SSLContext client) throws Exception {
        Socket raw = new Socket();
        raw.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()), 10_000);
        try (SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket(raw, host, server.port(), true)) {
            socket.setSoTimeout(10_000);
            SSLParameters params = socket.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            if (!Character.isDigit(host.charAt(0))) {
                params.setServerNames(List.of(new SNIHostName(host)));
            }
            socket.setSSLParameters(params);
            socket.startHandshake();
            assertEquals('k', socket.getInputStream().read());
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }

    /** A one-connection TLS server presenting one leaf; it records the SNI it was asked for. */
    final class Server implements AutoCloseable {
        final SSLServerSocket socket;
        final CompletableFuture<List<SNIServerName>> requestedNames = new CompletableFuture<>();

        Server(LeafCertificate leaf) throws Exception {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("leaf", leaf.key(), PASSWORD, leaf.chain());
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, PASSWORD);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), null, null);
            socket = (SSLServerSocket)
                    context.getServerSocketFactory().createServerSocket(0, 1, InetAddress.getLoopbackAddress());
            pool.execute(this::serveOne);
        }

        int port() {
            return socket.getLocalPort();
        }

        private void serveOne() {
            try (SSLSocket client = (SSLSocket) socket.accept()) {
                client.setSoTimeout(10_000);
                client.startHandshake();
                requestedNames.complete(((ExtendedSSLSession) client.getSession()).getRequestedServerNames());
                client.getOutputStream().write('k');
                client.getOutputStream().flush();
                client.getInputStream().read();
            } catch (IOException e) {
                requestedNames.completeExceptionally(e);
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
