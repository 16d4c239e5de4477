package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.ProxyReasons;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Holds whole messages to what RFC 6455 says their payload is: a text message is UTF-8 (1007 otherwise), a close
 * payload is empty or a valid status code followed by a UTF-8 reason (1002, 1007). What a receiver would refuse is not
 * sent to it.
 */
public final class PayloadCheck extends ChannelInboundHandlerAdapter {
    public static final String NAME = "ws-payload-check";

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof WsMessage m) {
            WsViolation problem = problem(m);
            if (problem != null) {
                m.release();
                ctx.fireExceptionCaught(problem);
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    static WsViolation problem(WsMessage m) {
        ByteBuf p = m.content();
        if (m.opcode() == WsMessage.TEXT && !Utf8.valid(p, p.readerIndex(), p.writerIndex())) {
            return invalidUtf8("a text message");
        }
        if (m.opcode() == WsMessage.CLOSE && p.isReadable()) {
            if (p.readableBytes() < 2) {
                return WsViolation.protocol("a close frame with a one-byte payload");
            }
            int code = p.getUnsignedShort(p.readerIndex());
            if (!sendable(code)) {
                return WsViolation.protocol("a close frame with status code " + code);
            }
            if (!Utf8.valid(p, p.readerIndex() + 2, p.writerIndex())) {
                return invalidUtf8("a close frame's reason");
            }
        }
        return null;
    }

    /** Status codes an endpoint may put in a close frame (RFC 6455 section 7.4, and the IANA registry). */
    static boolean sendable(int code) {
        return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
    }

    private static WsViolation invalidUtf8(String what) {
        return new WsViolation(
                WsViolation.INVALID_DATA, ProxyReasons.WEBSOCKET_INVALID_UTF8, what + " that is not UTF-8", false);
    }
}
