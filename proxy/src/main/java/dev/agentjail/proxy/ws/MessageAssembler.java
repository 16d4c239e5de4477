package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.ProxyReasons;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageDecoder;
import java.util.List;

/**
 * Joins the fragments of a data message into one {@link WsMessage}, up to a bound, and passes control frames on at once
 * (they may come between fragments). A continuation without a message, or a new message before the last one ended, is
 * a protocol error.
 */
public final class MessageAssembler extends MessageToMessageDecoder<WsFrame> {
    public static final String NAME = "ws-message-assembler";

    private final int maxMessage;
    private CompositeByteBuf parts;
    private int opcode;
    private boolean compressed;

    public MessageAssembler(int maxMessage) {
        super(WsFrame.class);
        this.maxMessage = maxMessage;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, WsFrame frame, List<Object> out) {
        int op = frame.opcode();
        if (WsMessage.isControl(op)) {
            out.add(new WsMessage(op, false, frame.content().retain()));
            return;
        }
        if (op == WsMessage.CONTINUATION) {
            if (parts == null) {
                throw WsViolation.protocol("a continuation frame with no message to continue");
            }
        } else {
            if (parts != null) {
                throw WsViolation.protocol("a new data frame before the fragmented message ended");
            }
            if (frame.fin()) {
                out.add(new WsMessage(op, frame.rsv1(), frame.content().retain()));
                return;
            }
            parts = ctx.alloc().compositeBuffer(1024);
            opcode = op;
            compressed = frame.rsv1();
        }
        if ((long) parts.readableBytes() + frame.content().readableBytes() > maxMessage) {
            discard();
            throw new WsViolation(
                    WsViolation.TOO_BIG,
                    ProxyReasons.WEBSOCKET_MESSAGE_TOO_BIG,
                    "a fragmented message longer than the " + maxMessage + " bytes the proxy inspects",
                    false);
        }
        parts.addComponent(true, frame.content().retain());
        if (frame.fin()) {
            CompositeByteBuf whole = parts;
            parts = null;
            out.add(new WsMessage(opcode, compressed, whole));
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        discard();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        discard();
    }

    private void discard() {
        if (parts != null) {
            parts.release();
            parts = null;
        }
    }
}
