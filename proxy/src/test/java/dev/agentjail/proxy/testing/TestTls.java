package dev.agentjail.proxy.testing;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.certs.LeafCertificate;
import dev.agentjail.certs.LeafCertificates;
import dev.agentjail.proxy.tls.Interception;
import dev.agentjail.proxy.tls.ServerContexts;
import dev.agentjail.proxy.tls.UpstreamTls;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * Real TLS for interception tests: the proxy's CA, a separate CA for the upstreams (which the proxy
 * trusts only when a test says so), server contexts for upstreams, and clients that trust exactly one
 * CA, never everything.
 */
public final class TestTls implements AutoCloseable {
    private final CertificateAuthority proxyCa;
    private final CertificateAuthority upstreamCa;
    private final LeafCertificates upstreamLeaves;
    private final ExecutorService minting = Executors.newFixedThreadPool(2);

    public TestTls(Path dir) throws Exception {
        Clock clock = Clock.systemUTC();
        this.proxyCa = CertificateAuthority.loadOrCreate(dir.resolve("proxy-ca"), clock);
        this.upstreamCa = CertificateAuthority.loadOrCreate(dir.resolve("upstream-ca"), clock);
        this.upstreamLeaves = new LeafCertificates(upstreamCa, clock, minting, Duration.ofHours(24), 100);
    }

    public CertificateAuthority proxyCa() {
        return proxyCa;
    }

    public CertificateAuthority upstreamCa() {
        return upstreamCa;
    }

    /** Interception whose upstream side trusts {@code upstreamRoots} only. */
    public Interception interception(List<X509Certificate> upstreamRoots) throws Exception {
        LeafCertificates leaves = new LeafCertificates(proxyCa, Clock.systemUTC(), minting, Duration.ofHours(24), 100);
        return new Interception(new ServerContexts(leaves, minting, 100), UpstreamTls.trusting(upstreamRoots));
    }

    /** Interception that trusts the upstream CA: the normal case in tests. */
    public Interception interception() throws Exception {
        return interception(List.of(upstreamCa.certificate()));
    }

    /** A server context for an upstream named {@code host}, its certificate from the upstream CA. */
    public SSLContext upstreamServer(String host) throws Exception {
        LeafCertificate leaf = upstreamLeaves.forHost(host).get();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("leaf", leaf.key(), new char[0], leaf.chain());
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    /** A client context that trusts only {@code ca}. */
    public static SSLContext clientTrusting(X509Certificate ca) throws Exception {
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        ts.setCertificateEntry("ca", ca);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /**
     * Sends {@code CONNECT authority} to the proxy; returns the socket positioned after the proxy's answer and
     * that answer's status line.
     */
    public static Connected connect(int proxyPort, String authority) throws IOException {
        Socket s = new Socket("127.0.0.1", proxyPort);
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return new Connected(s, readHead(s.getInputStream()));
    }

    /** TLS over an established tunnel: SNI {@code sni} (null: none), the host name {@code verifyAs} checked. */
    public static SSLSocket handshake(Socket tunnel, SSLContext client, String sni, String verifyAs)
            throws IOException {
        SSLSocket tls = (SSLSocket) client.getSocketFactory().createSocket(tunnel, verifyAs, tunnel.getPort(), true);
        SSLParameters p = tls.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        p.setServerNames(sni == null ? List.of() : List.of(new SNIHostName(sni)));
        tls.setSSLParameters(p);
        tls.startHandshake();
        return tls;
    }

    /** Reads a response head byte by byte (so nothing after it is consumed) and returns it. */
    public static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            head.append((char) c);
            if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) {
                return head.toString();
            }
        }
        return head.toString();
    }

    /** Reads {@code n} bytes, or fewer at end of stream. */
    public static String readBody(InputStream in, int n) throws IOException {
        byte[] b = in.readNBytes(n);
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() {
        minting.shutdownNow();
    }

    /** A socket on which the proxy has answered a CONNECT. */
    public record Connected(Socket socket, String head) {
        public String statusLine() {
            int end = head.indexOf("\r\n");
            return end < 0 ? head : head.substring(0, end);
        }
    }
}
