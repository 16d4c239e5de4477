package dev.agentjail.proxy.testing;

import java.nio.ByteBuffer;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/** Real TLS ClientHellos, as a JDK client sends them, for tests of what looks at a connection's first bytes. */
public final class ClientHellos {
    private ClientHellos() {}

    /** The first TLS record a JDK client sends, with {@code sni} as its server name (none when null). */
    public static byte[] of(String sni) throws Exception {
        SSLEngine engine = SSLContext.getDefault().createSSLEngine("peer.invalid", 443);
        engine.setUseClientMode(true);
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setServerNames(sni == null ? List.of() : List.of(new SNIHostName(sni)));
        engine.setSSLParameters(parameters);
        ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        byte[] bytes = new byte[out.remaining()];
        out.get(bytes);
        return bytes;
    }
}
