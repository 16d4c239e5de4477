package dev.agentjail.proxy;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.MalformedTargetException;
import dev.agentjail.policy.Target;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.AbstractSniHandler;
import io.netty.util.concurrent.Future;

/**
 * Holds a relayed tunnel's first client bytes until they make a whole TLS ClientHello, and lets the tunnel go on only
 * if its server name (SNI) is the CONNECT host: a tunnel is relayed uninspected, so without this one allowed name of
 * a CDN could front for any other name the same servers answer. A ClientHello without SNI passes only for a CONNECT
 * to an IP address (clients send no SNI for those); bytes that are no ClientHello at all fail, since a tunnel is for
 * TLS. On a mismatch the connection closes and the tunnel's record says {@code sni-mismatch}; no byte reached the
 * upstream.
 */
final class TunnelSniCheck extends AbstractSniHandler<Boolean> {
    static final String NAME = "tunnel-sni";

    /** What the tunnel does with a refusal: record it (reason, detail); the check closes the connection. */
    interface Refusal {
        void refused(String reason, String detail);
    }

    private final Target target;
    private final Refusal tunnel;

    TunnelSniCheck(Target target, Refusal tunnel, int maxClientHello, long timeoutMillis) {
        super(maxClientHello, timeoutMillis);
        this.target = target;
        this.tunnel = tunnel;
    }

    /** Whether the first bytes were a TLS ClientHello at all (Netty hands none over for anything else). */
    private boolean clientHello;

    /** Refused once: what the decoder still holds is dropped with the connection, never judged again. */
    private boolean refused;

    /** Whether the ClientHello carries an encrypted server name (ECH, or the draft ESNI): the real name is hidden. */
    private boolean encryptedName;

    /** TLS extension types that carry an encrypted inner server name: ECH (RFC 9849), and draft ESNI. */
    private static final int ECH = 0xfe0d;

    private static final int ESNI = 0xffce;

    @Override
    protected Future<Boolean> lookup(ChannelHandlerContext ctx, ByteBuf hello) throws Exception {
        clientHello = hello != null;
        if (hello != null) {
            java.util.Set<Integer> extensions = extensionTypes(hello);
            encryptedName = extensions == null || extensions.contains(ECH) || extensions.contains(ESNI);
        }
        return super.lookup(ctx, hello);
    }

    @Override
    protected Future<Boolean> lookup(ChannelHandlerContext ctx, String hostname) {
        return ctx.executor().newSucceededFuture(clientHello && !encryptedName && matches(hostname, target));
    }

    /**
     * The extension types of a ClientHello body (as Netty hands it over: from the legacy version on), or null when it
     * does not parse: then it is refused, as its server name cannot be judged.
     */
    static java.util.Set<Integer> extensionTypes(ByteBuf hello) {
        int at = hello.readerIndex();
        int end = hello.writerIndex();
        at += 2 + 32; // legacy_version, random
        if (at + 1 > end) {
            return null;
        }
        at += 1 + hello.getUnsignedByte(at); // legacy_session_id
        if (at + 2 > end) {
            return null;
        }
        at += 2 + hello.getUnsignedShort(at); // cipher_suites
        if (at + 1 > end) {
            return null;
        }
        at += 1 + hello.getUnsignedByte(at); // legacy_compression_methods
        java.util.Set<Integer> types = new java.util.HashSet<>();
        if (at == end) {
            return types; // No extensions at all (then no SNI either).
        }
        if (at + 2 > end) {
            return null;
        }
        int extensionsEnd = at + 2 + hello.getUnsignedShort(at);
        at += 2;
        if (extensionsEnd > end) {
            return null;
        }
        while (at < extensionsEnd) {
            if (at + 4 > extensionsEnd) {
                return null;
            }
            types.add(hello.getUnsignedShort(at));
            at += 4 + hello.getUnsignedShort(at + 2);
        }
        return at == extensionsEnd ? types : null;
    }

    @Override
    protected void onLookupComplete(ChannelHandlerContext ctx, String hostname, Future<Boolean> future) {
        if (future.isSuccess() && Boolean.TRUE.equals(future.getNow())) {
            // Removing the decoder passes the ClientHello it held on to the relay, in order.
            ctx.pipeline().remove(this);
            return;
        }
        refuse(
                ctx,
                !clientHello
                        ? "no TLS ClientHello: a tunnel relays TLS to the CONNECT host " + target.host() + " only"
                        : encryptedName
                                ? "the ClientHello hides its server name (encrypted ClientHello), so a tunnel to "
                                        + target.host() + " cannot tell which server it reaches"
                                : hostname == null
                                        ? "the ClientHello names no server; a tunnel to " + target.host()
                                                + " needs its name"
                                        : "TLS server name does not match the CONNECT host " + target.host());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A ClientHello too large, or none in time: nothing was relayed, and nothing will be.
        refuse(ctx, "no TLS ClientHello naming the CONNECT host " + target.host());
    }

    private void refuse(ChannelHandlerContext ctx, String detail) {
        if (!refused) {
            refused = true;
            tunnel.refused(ProxyReasons.SNI_MISMATCH, detail);
        }
        ctx.close();
    }

    /**
     * Whether a ClientHello's server name stands for the CONNECT target: the one comparison of SNI and CONNECT host, for
     * relayed tunnels and interception alike. No name stands for an IP address only.
     */
    static boolean matches(String sni, Target target) {
        if (sni == null) {
            return target.kind() != HostKind.DNS;
        }
        try {
            return Authorities.parseAuthority(sni, target.port()).host().equals(target.host());
        } catch (MalformedTargetException e) {
            return false;
        }
    }
}
