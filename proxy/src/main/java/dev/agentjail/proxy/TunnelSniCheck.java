package dev.agentjail.proxy;

import dev.agentjail.policy.Target;
import dev.agentjail.proxy.tls.Hellos;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Lets a client's TLS go on only while every ClientHello in it names the CONNECT host: the first, and the second one
 * a HelloRetryRequest asks for. It follows the client's records (and, through {@link ServerHelloWatch}, the server's
 * hellos) until the handshake can hide no further ClientHello: after a TLS 1.3 ServerHello, or after a TLS 1.2
 * client's Finished; from then on a handshake record from the client (a renegotiation, whose ClientHello TLS 1.2
 * encrypts) closes the connection. Records that hold (part of) a ClientHello wait here until it is whole and judged.
 *
 * <p>Relayed ({@code network.tunnel}), anything it cannot read closes the connection: a tunnel is for TLS to the
 * CONNECT host. Terminated (the proxy's own TLS server reads the handshake), it judges the ClientHellos it can parse
 * and hands everything else to the TLS handler behind it.
 */
final class TunnelSniCheck extends ByteToMessageDecoder {
    static final String NAME = "tunnel-sni";

    /** What the tunnel does with a refusal: record it (reason, detail); the check closes the connection. */
    interface Refusal {
        void refused(String reason, String detail);
    }

    /** How far the handshake is, as the check follows it. */
    sealed interface Phase {
        /** Nothing yet: the first bytes must be a ClientHello. */
        record AwaitingClientHello() implements Phase {}

        /** A ClientHello went; the server's answer comes next (the client may send early data meanwhile). */
        record AwaitingServerHello() implements Phase {}

        /** The server sent a HelloRetryRequest: one more ClientHello may come, judged as the first was. */
        record RetryRequested() implements Phase {}

        /** A TLS 1.2 (or older) handshake: the client's messages are plain until its ChangeCipherSpec. */
        record Tls12(boolean cipherChanged) implements Phase {}

        /** No ClientHello can come any more in a form the proxy can read: no handshake record passes. */
        record Settled(int version) implements Phase {}
    }

    private final Target target;
    private final Refusal tunnel;
    private final int maxClientHello;
    private final long timeoutMillis;
    private final boolean relayed;

    private Phase phase = new Phase.AwaitingClientHello();
    private ChannelHandlerContext ctx;

    /** Records that hold a handshake message not yet whole, to be relayed once it is judged. */
    private final List<ByteBuf> held = new ArrayList<>();

    /** The bytes of handshake messages still incomplete. */
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    /** Bytes of the current record's body still to relay unread. */
    private int bodyLeft;

    private boolean refused;
    private boolean handedOver;
    private ScheduledFuture<?> timeout;

    /**
     * @param relayed true for a {@code network.tunnel} relay (whatever is unreadable is refused); false in front of the
     *     proxy's own TLS server
     */
    TunnelSniCheck(Target target, Refusal tunnel, int maxClientHello, long timeoutMillis, boolean relayed) {
        this.target = target;
        this.tunnel = tunnel;
        this.maxClientHello = maxClientHello;
        this.timeoutMillis = timeoutMillis;
        this.relayed = relayed;
    }

    Phase phase() {
        return phase;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (relayed && timeoutMillis > 0) {
            timeout = ctx.executor()
                    .schedule(
                            () -> {
                                if (phase instanceof Phase.AwaitingClientHello) {
                                    refuse(ProxyReasons.SNI_MISMATCH, noClientHello());
                                }
                            },
                            timeoutMillis,
                            TimeUnit.MILLISECONDS);
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (timeout != null) {
            timeout.cancel(false);
        }
        releaseHeld();
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (in.isReadable() && !refused) {
            if (handedOver) {
                out.add(in.readRetainedSlice(in.readableBytes()));
                ctx.pipeline().remove(this);
                return;
            }
            if (bodyLeft > 0) {
                int n = Math.min(bodyLeft, in.readableBytes());
                out.add(in.readRetainedSlice(n));
                bodyLeft -= n;
                continue;
            }
            if (in.readableBytes() < 5) {
                return;
            }
            int at = in.readerIndex();
            int type = in.getUnsignedByte(at);
            int length = in.getUnsignedShort(at + 3);
            String problem = recordProblem(type, in.getUnsignedByte(at + 1), in.getUnsignedByte(at + 2), length);
            if (problem != null) {
                cannotFollow(out, problem);
                continue;
            }
            if (type == Hellos.HANDSHAKE && plainHandshake()) {
                if (in.readableBytes() < 5 + length) {
                    return;
                }
                byte[] fragment = new byte[length];
                in.getBytes(at + 5, fragment);
                held.add(in.readRetainedSlice(5 + length));
                if (handshake(fragment, out) && pending.size() == 0) {
                    out.addAll(held);
                    held.clear();
                }
                continue;
            }
            problem = record(type);
            if (problem != null) {
                cannotFollow(out, problem);
                continue;
            }
            out.add(in.readRetainedSlice(5));
            bodyLeft = length;
        }
        if (refused) {
            in.skipBytes(in.readableBytes());
        }
    }

    /** Whether a client handshake record now is in the clear (a ClientHello, or TLS 1.2's messages before CCS). */
    private boolean plainHandshake() {
        return !(phase instanceof Phase.Settled) && !(phase instanceof Phase.Tls12 t && t.cipherChanged());
    }

    /** Why a record header cannot start a TLS record, or null. */
    private String recordProblem(int type, int major, int minor, int length) {
        if (type < Hellos.CHANGE_CIPHER_SPEC || type > Hellos.APPLICATION_DATA || major != 3 || minor > 4) {
            return phase instanceof Phase.AwaitingClientHello
                    ? noClientHello()
                    : "the client sent bytes that are no TLS record (type " + type + ")";
        }
        if (length > Hellos.MAX_CIPHERTEXT
                || (type == Hellos.HANDSHAKE && plainHandshake() && length > Hellos.MAX_PLAINTEXT)) {
            return "the client sent a TLS record longer than TLS allows";
        }
        if (length == 0 && type != Hellos.APPLICATION_DATA) {
            return "the client sent an empty TLS record of type " + type;
        }
        return null;
    }

    /** A record that is not a handshake message in the clear: why it may not pass now, or null (its phase moves on). */
    private String record(int type) {
        if (pending.size() > 0) {
            return "the client interleaved another record with the fragments of a handshake message";
        }
        if (phase instanceof Phase.AwaitingClientHello) {
            return noClientHello();
        }
        return switch (type) {
            case Hellos.HANDSHAKE ->
                switch (phase) {
                    case Phase.Tls12 t -> {
                        phase = new Phase.Settled(Hellos.TLS12); // Its Finished, encrypted.
                        yield null;
                    }
                    case Phase.Settled s
                    when s.version() == Hellos.TLS13 ->
                        "the client sent a handshake record after the TLS 1.3 ServerHello";
                    default ->
                        "the client started a TLS renegotiation: its ClientHello is encrypted, so a tunnel to "
                                + target.host() + " cannot tell which server it asks for";
                };
            case Hellos.CHANGE_CIPHER_SPEC -> {
                if (phase instanceof Phase.Tls12 t && !t.cipherChanged()) {
                    phase = new Phase.Tls12(true);
                }
                yield null;
            }
            case Hellos.APPLICATION_DATA ->
                phase instanceof Phase.AwaitingServerHello || phase instanceof Phase.Settled
                        ? null
                        : "the client sent application data in the middle of its handshake";
            default -> null; // An alert.
        };
    }

    /** Takes a plaintext handshake fragment; judges every message it completes. False once refused. */
    private boolean handshake(byte[] fragment, List<Object> out) {
        pending.writeBytes(fragment);
        byte[] bytes = pending.toByteArray();
        int at = 0;
        while (bytes.length - at >= 4) {
            int type = bytes[at] & 0xff;
            int length = ((bytes[at + 1] & 0xff) << 16) | ((bytes[at + 2] & 0xff) << 8) | (bytes[at + 3] & 0xff);
            if (length > maxClientHello) {
                cannotFollow(out, "the client's handshake message is larger than " + maxClientHello + " bytes");
                return false;
            }
            if (bytes.length - at - 4 < length) {
                break;
            }
            if (!message(type, Arrays.copyOfRange(bytes, at + 4, at + 4 + length), out)) {
                return false;
            }
            at += 4 + length;
        }
        pending.reset();
        pending.write(bytes, at, bytes.length - at);
        return true;
    }

    /** Judges one whole client handshake message; false when it may not pass (refused or handed over). */
    private boolean message(int type, byte[] body, List<Object> out) {
        if (type != Hellos.CLIENT_HELLO) {
            if (phase instanceof Phase.Tls12) {
                return true; // ClientKeyExchange, Certificate, CertificateVerify.
            }
            cannotFollow(
                    out,
                    phase instanceof Phase.AwaitingClientHello
                            ? noClientHello()
                            : "the client sent handshake message " + type + " before the server's hello");
            return false;
        }
        if (!(phase instanceof Phase.AwaitingClientHello) && !(phase instanceof Phase.RetryRequested)) {
            cannotFollow(out, "the client sent a ClientHello the server did not ask for");
            return false;
        }
        String why = judge(Hellos.clientHello(body), phase instanceof Phase.RetryRequested);
        if (why != null) {
            refuse(ProxyReasons.SNI_MISMATCH, why);
            return false;
        }
        phase = new Phase.AwaitingServerHello();
        if (timeout != null) {
            timeout.cancel(false);
        }
        return true;
    }

    /** Why a ClientHello may not pass, or null: its one server name is the CONNECT host. */
    private String judge(Hellos.ClientHelloName hello, boolean second) {
        String which = second ? "the second ClientHello (after a HelloRetryRequest)" : "the ClientHello";
        if (hello.unreadable() != null) {
            return second ? hello.unreadable().replace("the ClientHello", which) : hello.unreadable();
        }
        if (hello.hidden()) {
            // Terminated, the proxy's server never decrypts an inner ClientHello (nor does it route by it).
            return relayed
                    ? which + " hides its server name (encrypted ClientHello), so a tunnel to " + target.host()
                            + " cannot tell which server it reaches"
                    : null;
        }
        if (hello.name() == null) {
            return !relayed || Hellos.names(null, target)
                    ? null
                    : which + " names no server; a tunnel to " + target.host() + " needs its name";
        }
        return Hellos.names(hello.name(), target)
                ? null
                : "TLS server name does not match the CONNECT host " + target.host()
                        + (second ? " (in the second ClientHello, after a HelloRetryRequest)" : "");
    }

    /**
     * The server's hello, as {@link ServerHelloWatch} read it, before the client sees it: a HelloRetryRequest lets one
     * more ClientHello come; the real one settles the version.
     */
    void serverHello(Hellos.ServerHelloKind hello) {
        if (refused || handedOver) {
            return;
        }
        if (hello.unreadable() != null) {
            serverUnreadable(hello.unreadable());
            return;
        }
        if (!(phase instanceof Phase.AwaitingServerHello)) {
            serverUnreadable("the server sent a hello the client's handshake did not ask for");
            return;
        }
        if (hello.retry()) {
            phase = new Phase.RetryRequested();
        } else if (hello.version() == Hellos.TLS13) {
            phase = new Phase.Settled(Hellos.TLS13);
        } else {
            phase = new Phase.Tls12(false);
        }
        if (!relayed && phase instanceof Phase.Settled) {
            handOver();
        }
    }

    /** The server's side of the handshake could not be followed. */
    void serverUnreadable(String detail) {
        if (relayed) {
            refuse(ProxyReasons.TUNNEL_TLS_UNREADABLE, detail);
        } else {
            handOver();
        }
    }

    /** Terminated: what follows is the TLS handler's to read; the check passes everything on and leaves. */
    private void handOver() {
        handedOver = true;
        for (ByteBuf b : held) {
            ctx.fireChannelRead(b);
        }
        held.clear();
        pending.reset();
    }

    /**
     * The client's side of the handshake cannot be followed. Relayed, the tunnel is refused: before any ClientHello as
     * {@code sni-mismatch} (no name to judge), later as {@code tunnel-tls-unreadable}. Terminated, the bytes go on to
     * the TLS handler, which fails what is no TLS.
     */
    private void cannotFollow(List<Object> out, String problem) {
        if (relayed) {
            refuse(
                    phase instanceof Phase.AwaitingClientHello
                            ? ProxyReasons.SNI_MISMATCH
                            : ProxyReasons.TUNNEL_TLS_UNREADABLE,
                    problem);
            return;
        }
        out.addAll(held);
        held.clear();
        pending.reset();
        handedOver = true;
    }

    private String noClientHello() {
        return "no TLS ClientHello: a tunnel relays TLS to the CONNECT host " + target.host() + " only";
    }

    private void refuse(String reason, String detail) {
        if (!refused) {
            refused = true;
            releaseHeld();
            pending.reset();
            tunnel.refused(reason, detail);
        }
        ctx.close();
    }

    private void releaseHeld() {
        for (ByteBuf b : held) {
            b.release();
        }
        held.clear();
    }
}
