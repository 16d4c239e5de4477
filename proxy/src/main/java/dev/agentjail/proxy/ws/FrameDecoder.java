package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.ProxyReasons;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Parses the bytes of one side of a WebSocket connection into frames (RFC 6455 section 5.2) and refuses every frame the
 * RFCs forbid: masking the wrong way for the side (a client must mask, a server must not), RSV2/RSV3, RSV1 without
 * permessage-deflate or on a control or continuation frame, reserved opcodes, control frames that are fragmented or
 * longer than 125 bytes, lengths not in their shortest form or with the 64-bit top bit set, and payloads longer than
 * the proxy inspects. A frame is emitted only once all of it arrived; after a violation every further byte is dropped.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    public static final String NAME = "ws-frame-decoder";

    private final boolean fromClient;
    private final boolean deflate;
    private final int maxPayload;
    private boolean failed;

    /**
     * @param fromClient the frames come from the client (and must be masked), else from the server (must not be)
     * @param deflate permessage-deflate was negotiated: RSV1 marks a compressed message
     * @param maxPayload the longest payload a frame may declare
     */
    public FrameDecoder(boolean fromClient, boolean deflate, int maxPayload) {
        this.fromClient = fromClient;
        this.deflate = deflate;
        this.maxPayload = maxPayload;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        try {
            WsFrame frame = next(ctx, in);
            if (frame != null) {
                out.add(frame);
            }
        } catch (WsViolation v) {
            failed = true;
            in.skipBytes(in.readableBytes());
            throw v;
        }
    }

    /** The next whole frame, or null (nothing consumed) while it is incomplete. */
    private WsFrame next(ChannelHandlerContext ctx, ByteBuf in) {
        int start = in.readerIndex();
        if (in.readableBytes() < 2) {
            return null;
        }
        int b0 = in.getUnsignedByte(start);
        int b1 = in.getUnsignedByte(start + 1);
        boolean fin = (b0 & 0x80) != 0;
        boolean rsv1 = (b0 & 0x40) != 0;
        int opcode = b0 & 0x0f;
        boolean masked = (b1 & 0x80) != 0;
        checkHead(b0, opcode, fin, rsv1, masked, b1 & 0x7f);
        int headLength = 2;
        long length = b1 & 0x7f;
        if (length == 126) {
            if (in.readableBytes() < 4) {
                return null;
            }
            length = in.getUnsignedShort(start + 2);
            headLength = 4;
            if (length < 126) {
                throw WsViolation.protocol("a 16-bit frame length of " + length + " is not in its shortest form");
            }
        } else if (length == 127) {
            if (in.readableBytes() < 10) {
                return null;
            }
            length = in.getLong(start + 2);
            headLength = 10;
            if (length < 0) {
                throw WsViolation.protocol("a 64-bit frame length with its most significant bit set");
            }
            if (length <= 0xffff) {
                throw WsViolation.protocol("a 64-bit frame length of " + length + " is not in its shortest form");
            }
        }
        if (length > maxPayload) {
            throw new WsViolation(
                    WsViolation.TOO_BIG,
                    ProxyReasons.WEBSOCKET_MESSAGE_TOO_BIG,
                    "a frame of " + length + " bytes, more than the " + maxPayload + " the proxy inspects",
                    false);
        }
        int maskLength = masked ? 4 : 0;
        int n = (int) length;
        if (in.readableBytes() < headLength + maskLength + n) {
            return null;
        }
        in.skipBytes(headLength);
        int key = masked ? in.readInt() : 0;
        ByteBuf payload = ctx.alloc().buffer(n);
        try {
            if (masked) {
                unmask(in, payload, n, key);
            } else {
                payload.writeBytes(in, n);
            }
        } catch (RuntimeException e) {
            payload.release();
            throw e;
        }
        return new WsFrame(opcode, fin, rsv1, payload);
    }

    private void checkHead(int b0, int opcode, boolean fin, boolean rsv1, boolean masked, int length7) {
        if ((b0 & 0x30) != 0) {
            throw WsViolation.protocol("RSV2 or RSV3 set, and no extension that defines them was negotiated");
        }
        boolean control = WsMessage.isControl(opcode);
        switch (opcode) {
            case WsMessage.CONTINUATION,
                    WsMessage.TEXT,
                    WsMessage.BINARY,
                    WsMessage.CLOSE,
                    WsMessage.PING,
                    WsMessage.PONG -> {}
            default -> throw WsViolation.protocol("reserved opcode 0x" + Integer.toHexString(opcode));
        }
        if (rsv1 && !deflate) {
            throw WsViolation.protocol("RSV1 set, and no extension that defines it was negotiated");
        }
        if (rsv1 && (control || opcode == WsMessage.CONTINUATION)) {
            throw WsViolation.protocol("RSV1 set on a " + (control ? "control" : "continuation") + " frame");
        }
        if (control && (!fin || length7 > 125)) {
            throw WsViolation.protocol("a control frame that is fragmented or longer than 125 bytes");
        }
        if (masked != fromClient) {
            throw WsViolation.protocol(
                    fromClient ? "an unmasked frame from the client" : "a masked frame from the server");
        }
    }

    private static void unmask(ByteBuf in, ByteBuf out, int n, int key) {
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            out.writeInt(in.readInt() ^ key);
        }
        for (; i < n; i++) {
            int shift = 24 - 8 * (i & 3);
            out.writeByte(in.readByte() ^ (key >>> shift));
        }
    }
}
