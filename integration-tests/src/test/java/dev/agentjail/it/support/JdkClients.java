package dev.agentjail.it.support;

import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/** JDK HttpClients that send everything through the proxy under test. */
public final class JdkClients {
    private JdkClients() {}

    /** An HTTP/1.1 client whose every request goes through the proxy at 127.0.0.1:{@code proxyPort}. */
    public static HttpClient viaProxy(int proxyPort) {
        return builder(proxyPort).build();
    }

    /** The same, for HTTPS through CONNECT, trusting only what {@code tls} trusts. */
    public static HttpClient viaProxy(int proxyPort, SSLContext tls) {
        return builder(proxyPort).sslContext(tls).build();
    }

    public static HttpClient.Builder builder(int proxyPort) {
        return HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", proxyPort)))
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10));
    }
}
