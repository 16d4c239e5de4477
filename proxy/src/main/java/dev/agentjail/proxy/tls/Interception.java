package dev.agentjail.proxy.tls;

import java.util.Objects;

/**
 * What the proxy needs to look inside CONNECT tunnels: certificates to present to the client, and a
 * verifying TLS client towards the real upstream.
 */
public record Interception(ServerContexts server, UpstreamTls upstream) {
    public Interception {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(upstream, "upstream");
    }
}
