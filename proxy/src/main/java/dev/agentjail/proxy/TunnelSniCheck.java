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
 * a HelloRetryRequest asks for. It frames the client's records and follows the handshake ({@link ClientHandshake};
 * the server's hellos come from {@link ServerHelloWatch}) until no ClientHello can come unread: after a TLS 1.3
 * ServerHello, or after a TLS 1.2 client's Finished. From then on it reads only record headers, and a handshake record
 * from the client (a renegotiation, whose ClientHello TLS 1.2 encrypts) closes the connection. Records that hold (part
 * of) a ClientHello wait here until it is whole and judged.
 *
 * <p>Relayed ({@code network.tunnel}), anything it cannot read closes the connection: a tunnel is for TLS to the
 * CONNECT host. Terminated (the proxy's own TLS server reads the handshake), it judges the ClientHellos it can parse
 * and hands everything else to the TLS handler behind it, then leaves once that server has sent its ServerHello.
 */
final class TunnelSniCheck extends ByteToMessageDecoder {
    static final String NAME = "tunnel-sni";

    /** What the tunnel does with a refusal: record it (reason, detail); the check closes the connection. */
    interface Refusal {
        void refused(String reason, String detail);
    }

    private final Refusal tunnel;
    private final int maxClientHello;
    private final long timeoutMillis;
    private final boolean relayed;
    private final ClientHandshake handshake;

    /** Records that hold a handshake message not yet whole, to be relayed once it is judged. */
    private final List<ByteBuf> held = new ArrayList<>();

    /** The bytes of handshake messages still incomplete. */
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    private ChannelHandlerContext ctx;

    /** Bytes of the current record's body still to relay unread. */
    private int bodyLeft;

    private boolean refused;
    private boolean handedOver;
    private ScheduledFuture<?> timeout;

    /**
     * @param relayed true for a {@code network.tunnel} relay (whatever is unreadable is refused); false in front of the
     *     proxy's own TLS server
     * @param timeoutMillis how long a relayed tunnel waits for its first ClientHello (0: no limit here)
     */
    TunnelSniCheck(Target target, Refusal tunnel, int maxClientHello, long timeoutMillis, boolean relayed) {
        this.tunnel = tunnel;
        this.maxClientHello = maxClientHello;
        this.timeoutMillis = timeoutMillis;
        this.relayed = relayed;
        this.handshake = new ClientHandshake(target, relayed);
    }

    ClientHandshake.Phase phase() {
        return handshake.phase();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (relayed && timeoutMillis > 0) {
            timeout = ctx.executor()
                    .schedule(
                            () -> {
                                if (!handshake.started()) {
                                    refuse(ProxyReasons.SNI_MISMATCH, handshake.noClientHello());
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
            if (!relayUnread(in, out)) {
                continue; // Refused, or handed over with the rest.
            }
            if (in.readableBytes() < 5) {
                break;
            }
            // A handshake record in the clear: whole records only, held until the messages in them are judged.
            int length = in.getUnsignedShort(in.readerIndex() + 3);
            if (in.readableBytes() < 5 + length) {
                break;
            }
            byte[] fragment = new byte[length];
            in.getBytes(in.readerIndex() + 5, fragment);
            held.add(in.readRetainedSlice(5 + length));
            if (messages(fragment, out) && pending.size() == 0) {
                out.addAll(held);
                held.clear();
            }
        }
        if (refused) {
            in.skipBytes(in.readableBytes());
        }
    }

    /**
     * Relays, as one slice, the records that need no holding (their headers checked, their bodies unread), up to the
     * next handshake record in the clear or the end of what arrived. False when the handshake cannot go on.
     */
    private boolean relayUnread(ByteBuf in, List<Object> out) {
        int start = in.readerIndex();
        int at = start;
        int end = in.writerIndex();
        while (at < end) {
            if (bodyLeft > 0) {
                int n = Math.min(bodyLeft, end - at);
                at += n;
                bodyLeft -= n;
                continue;
            }
            if (end - at < 5) {
                break;
            }
            int type = in.getUnsignedByte(at);
            int length = in.getUnsignedShort(at + 3);
            ClientHandshake.Problem problem =
                    handshake.header(type, in.getUnsignedByte(at + 1), in.getUnsignedByte(at + 2), length);
            if (problem == null && type == Hellos.HANDSHAKE && handshake.plainHandshake()) {
                break;
            }
            if (problem == null) {
                problem = handshake.record(type, pending.size() > 0);
            }
            if (problem != null) {
                if (at > start) {
                    out.add(in.readRetainedSlice(at - start));
                }
                cannotFollow(out, problem);
                return false;
            }
            at += 5;
            bodyLeft = length;
        }
        if (at > start) {
            out.add(in.readRetainedSlice(at - start));
        }
        return true;
    }

    /** Takes a plaintext handshake fragment; judges every message it completes. False once refused or handed over. */
    private boolean messages(byte[] fragment, List<Object> out) {
        pending.writeBytes(fragment);
        byte[] bytes = pending.toByteArray();
        int at = 0;
        while (bytes.length - at >= 4) {
            int type = bytes[at] & 0xff;
            int length = ((bytes[at + 1] & 0xff) << 16) | ((bytes[at + 2] & 0xff) << 8) | (bytes[at + 3] & 0xff);
            if (length > maxClientHello) {
                cannotFollow(
                        out,
                        ClientHandshake.Problem.of(
                                "the client's handshake message is larger than " + maxClientHello + " bytes"));
                return false;
            }
            if (bytes.length - at - 4 < length) {
                break;
            }
            ClientHandshake.Problem problem =
                    handshake.message(type, Arrays.copyOfRange(bytes, at + 4, at + 4 + length));
            if (problem != null) {
                cannotFollow(out, problem);
                return false;
            }
            if (timeout != null && handshake.started()) {
                timeout.cancel(false);
            }
            at += 4 + length;
        }
        pending.reset();
        pending.write(bytes, at, bytes.length - at);
        return true;
    }

    /** The server's hello, as {@link ServerHelloWatch} read it before the client sees it. */
    void serverHello(Hellos.ServerHelloKind hello) {
        if (refused || handedOver) {
            return;
        }
        ClientHandshake.Problem problem = handshake.serverHello(hello);
        if (problem != null) {
            serverUnreadable(problem.detail());
        } else if (!relayed && handshake.phase() instanceof ClientHandshake.Phase.Settled) {
            handOver();
        }
    }

    /** The server's side of the handshake could not be followed. */
    void serverUnreadable(String detail) {
        if (relayed) {
            refuse(ProxyReasons.TUNNEL_TLS_UNREADABLE, detail);
        } else if (!refused) {
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
     * The handshake cannot go on as the client sent it. A server name that is not the CONNECT host's is refused ({@code
     * sni-mismatch}). Otherwise, relayed, the tunnel is refused too: before any ClientHello as {@code sni-mismatch} (no
     * name to judge), later as {@code tunnel-tls-unreadable}; terminated, the bytes go on to the TLS handler, which
     * fails what is no TLS.
     */
    private void cannotFollow(List<Object> out, ClientHandshake.Problem problem) {
        if (problem.name() || relayed) {
            refuse(
                    problem.name() || !handshake.started()
                            ? ProxyReasons.SNI_MISMATCH
                            : ProxyReasons.TUNNEL_TLS_UNREADABLE,
                    problem.detail());
            return;
        }
        out.addAll(held);
        held.clear();
        pending.reset();
        handedOver = true;
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
