package dev.agentjail.proxy.upstream;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetAddress;

/** The result of resolving, checking and connecting to an upstream. */
public sealed interface DialOutcome {
    /** Connected to exactly the address that was checked. */
    record Connected(Channel channel, InetAddress address) implements DialOutcome {}

    /** Refused by the SSRF guard: no connection was attempted. */
    record Refused(String reason, InetAddress address) implements DialOutcome {}

    /** Resolution or connection failed. */
    record Failed(HttpResponseStatus status, String reason, String detail, InetAddress address)
            implements DialOutcome {}
}
