package dev.agentjail.proxy.ws;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;
import java.util.random.RandomGenerator;

/**
 * Writes each message as one final frame, the shortest length form, RSV1 for a compressed message; masked with a fresh
 * key per frame toward the server (RFC 6455 section 5.3), unmasked toward the client.
 */
public final class FrameEncoder extends MessageToByteEncoder<WsMessage> {
    public static final String NAME = "ws-frame-encoder";

    private final RandomGenerator masks;

    /** @param masks mask keys for frames to a server; null for frames to the client (unmasked) */
    public FrameEncoder(RandomGenerator masks) {
        super(WsMessage.class);
        this.masks = masks;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, WsMessage msg, ByteBuf out) {
        ByteBuf payload = msg.content();
        int n = payload.readableBytes();
        out.ensureWritable(14 + n);
        out.writeByte(0x80 | (msg.compressed() ? 0x40 : 0) | msg.opcode());
        int maskBit = masks != null ? 0x80 : 0;
        if (n < 126) {
            out.writeByte(maskBit | n);
        } else if (n <= 0xffff) {
            out.writeByte(maskBit | 126).writeShort(n);
        } else {
            out.writeByte(maskBit | 127).writeLong(n);
        }
        if (masks == null) {
            out.writeBytes(payload, payload.readerIndex(), n);
            return;
        }
        int key = masks.nextInt();
        out.writeInt(key);
        int i = payload.readerIndex();
        int end = i + n;
        for (; i + 4 <= end; i += 4) {
            out.writeInt(payload.getInt(i) ^ key);
        }
        for (int k = 0; i < end; i++, k++) {
            out.writeByte(payload.getByte(i) ^ (key >>> (24 - 8 * k)));
        }
    }
}
