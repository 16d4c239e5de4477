package dev.agentjail.proxy;

import dev.agentjail.proxy.tls.Hellos;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * Reads the server's side of a TLS handshake as far as its ServerHello (past a HelloRetryRequest) and tells the
 * client's {@link TunnelSniCheck} what it said before the client sees it. It copies what it reads and passes every
 * byte on unchanged, then leaves the pipeline. On a relayed tunnel it watches what the upstream sends; in front of
 * the proxy's own TLS server, what that server writes.
 */
final class ServerHelloWatch extends ChannelDuplexHandler {
    static final String NAME = "tunnel-server-hello";

    /** A ServerHello (and a HelloRetryRequest before it) is far smaller; a server sending more first is refused. */
    private static final int MAX_UNTIL_HELLO = 64 * 1024;

    private final TunnelSniCheck gate;
    private final boolean outbound;
    private final ByteBuf seen = Unpooled.buffer();
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
    private long total;
    private boolean done;

    /** @param outbound true to read what this channel writes (the proxy's TLS server), false what it reads */
    ServerHelloWatch(TunnelSniCheck gate, boolean outbound) {
        this.gate = gate;
        this.outbound = outbound;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!outbound && !done && msg instanceof ByteBuf b && !observe(b)) {
            ReferenceCountUtil.release(msg);
            ctx.close();
            return;
        }
        ctx.fireChannelRead(msg);
        leaveWhenDone(ctx);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (outbound && !done && msg instanceof ByteBuf b) {
            observe(b);
        }
        ctx.write(msg, promise);
        leaveWhenDone(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        seen.release();
    }

    private void leaveWhenDone(ChannelHandlerContext ctx) {
        if (done && !ctx.isRemoved()) {
            ctx.pipeline().remove(this);
        }
    }

    /** Reads a copy of {@code b}; false when the server's handshake cannot be followed. */
    private boolean observe(ByteBuf b) {
        total += b.readableBytes();
        seen.writeBytes(b, b.readerIndex(), b.readableBytes());
        String problem = total > MAX_UNTIL_HELLO ? "the server sent more than 64 KiB before its ServerHello" : read();
        if (problem != null) {
            done = true;
            gate.serverUnreadable(problem);
            return false;
        }
        return true;
    }

    /** Reads the whole records in {@link #seen}; why the handshake cannot be followed, or null. */
    private String read() {
        while (!done && seen.readableBytes() >= 5) {
            int at = seen.readerIndex();
            int type = seen.getUnsignedByte(at);
            int length = seen.getUnsignedShort(at + 3);
            if (seen.getUnsignedByte(at + 1) != 3 || length > Hellos.MAX_CIPHERTEXT) {
                return "the server sent bytes that are no TLS record";
            }
            if (seen.readableBytes() < 5 + length) {
                break;
            }
            switch (type) {
                case Hellos.CHANGE_CIPHER_SPEC, Hellos.ALERT -> {
                    // TLS 1.3's compatibility ChangeCipherSpec after a HelloRetryRequest; an alert ends it anyway.
                }
                case Hellos.HANDSHAKE -> {
                    byte[] fragment = new byte[length];
                    seen.getBytes(at + 5, fragment);
                    String problem = handshake(fragment);
                    if (problem != null) {
                        return problem;
                    }
                }
                default -> {
                    return "the server sent a record of type " + type + " before its ServerHello";
                }
            }
            seen.skipBytes(5 + length);
        }
        seen.discardReadBytes();
        return null;
    }

    private String handshake(byte[] fragment) {
        pending.writeBytes(fragment);
        byte[] bytes = pending.toByteArray();
        int at = 0;
        while (!done && bytes.length - at >= 4) {
            int type = bytes[at] & 0xff;
            int length = ((bytes[at + 1] & 0xff) << 16) | ((bytes[at + 2] & 0xff) << 8) | (bytes[at + 3] & 0xff);
            if (type != Hellos.SERVER_HELLO) {
                return "the server's first handshake message is no ServerHello (type " + type + ")";
            }
            if (length > MAX_UNTIL_HELLO) {
                return "the server's ServerHello is larger than 64 KiB";
            }
            if (bytes.length - at - 4 < length) {
                break;
            }
            Hellos.ServerHelloKind hello = Hellos.serverHello(Arrays.copyOfRange(bytes, at + 4, at + 4 + length));
            if (hello.unreadable() != null) {
                return hello.unreadable();
            }
            // What follows the real ServerHello is no longer ours to read (TLS 1.3 encrypts it anyway).
            done = !hello.retry();
            gate.serverHello(hello);
            at += 4 + length;
        }
        pending.reset();
        pending.write(bytes, at, bytes.length - at);
        return null;
    }
}
