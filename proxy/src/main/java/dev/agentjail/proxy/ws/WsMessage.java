package dev.agentjail.proxy.ws;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.DefaultByteBufHolder;
import java.nio.charset.StandardCharsets;

/**
 * One whole WebSocket message (a data message with all its fragments joined, or a control frame), as the proxy
 * scans it and sends it on in one frame; {@code compressed} says whether the payload is permessage-deflate data.
 */
public final class WsMessage extends DefaultByteBufHolder {
    public static final int CONTINUATION = 0x0;
    public static final int TEXT = 0x1;
    public static final int BINARY = 0x2;
    public static final int CLOSE = 0x8;
    public static final int PING = 0x9;
    public static final int PONG = 0xA;

    private final int opcode;
    private final boolean compressed;

    public WsMessage(int opcode, boolean compressed, ByteBuf payload) {
        super(payload);
        this.opcode = opcode;
        this.compressed = compressed;
    }

    /** A close frame with {@code code} and {@code reason} (at most 123 bytes of it are kept). */
    public static WsMessage close(ByteBufAllocator alloc, int code, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, 123);
        ByteBuf payload = alloc.buffer(2 + n);
        payload.writeShort(code).writeBytes(text, 0, n);
        return new WsMessage(CLOSE, false, payload);
    }

    public int opcode() {
        return opcode;
    }

    public boolean compressed() {
        return compressed;
    }

    public boolean isControl() {
        return isControl(opcode);
    }

    /** The same message with another payload (the caller hands over {@code payload}). */
    public WsMessage withPayload(ByteBuf payload, boolean compressed) {
        return new WsMessage(opcode, compressed, payload);
    }

    static boolean isControl(int opcode) {
        return (opcode & 0x8) != 0;
    }
}
