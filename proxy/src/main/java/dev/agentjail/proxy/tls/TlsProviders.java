package dev.agentjail.proxy.tls;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

/**
 * Which TLS implementation interception uses: BoringSSL through Netty's native binding where it loads
 * (Linux x86_64 and aarch64), else the JDK's. Both verify the same way; BoringSSL costs several times
 * less per handshake and per byte, which is most of what an intercepted connection costs.
 */
final class TlsProviders {
    private TlsProviders() {}

    static SslProvider preferred() {
        return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    }
}
