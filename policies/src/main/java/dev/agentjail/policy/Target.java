package dev.agentjail.policy;

import java.util.Objects;

/**
 * A canonical destination: the one form of host and port used for every later step (decision,
 * DNS, dial, log).
 *
 * <p>{@code host} is lower-case ASCII (punycode for IDN) without a trailing dot for {@link
 * HostKind#DNS}; dotted-quad decimal for {@link HostKind#IPV4}; RFC 5952 text without brackets for
 * {@link HostKind#IPV6}.
 */
public record Target(String host, HostKind kind, int port) {
    public Target {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(kind, "kind");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    /** The authority as written on the wire: IPv6 in brackets, always with the port. */
    public String authority() {
        return (kind == HostKind.IPV6 ? "[" + host + "]" : host) + ":" + port;
    }

    /** The host as written in a URI or Host header: IPv6 in brackets. */
    public String uriHost() {
        return kind == HostKind.IPV6 ? "[" + host + "]" : host;
    }

    public boolean isIpLiteral() {
        return kind != HostKind.DNS;
    }
}
