package dev.agentjail.proxy.upstream;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetAddress;

/** The result of resolving, checking and connecting to an upstream. */
public sealed interface DialOutcome {
    /** Connected to exactly the address that was checked. */
    record Connected(Channel channel, InetAddress address) implements DialOutcome {}

    /** Refused by the SSRF guard or the self-connection check: no connection was attempted. */
    record Refused(String reason, InetAddress address, String detail) implements DialOutcome {
        /** A refusal by the SSRF guard: the address is not public. */
        public Refused(String reason, InetAddress address) {
            this(reason, address, null);
        }
    }

    /** Resolution or connection failed. */
    record Failed(HttpResponseStatus status, String reason, String detail, InetAddress address)
            implements DialOutcome {}
}
