package dev.agentjail.proxy.ws;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/** One WebSocket frame as it arrived (RFC 6455 section 5.2), its payload unmasked; the holder owns the payload. */
public final class WsFrame extends DefaultByteBufHolder {
    private final int opcode;
    private final boolean fin;
    private final boolean rsv1;

    public WsFrame(int opcode, boolean fin, boolean rsv1, ByteBuf payload) {
        super(payload);
        this.opcode = opcode;
        this.fin = fin;
        this.rsv1 = rsv1;
    }

    public int opcode() {
        return opcode;
    }

    public boolean fin() {
        return fin;
    }

    /** The per-message-compressed bit (RFC 7692): allowed only on the first frame of a data message. */
    public boolean rsv1() {
        return rsv1;
    }
}
