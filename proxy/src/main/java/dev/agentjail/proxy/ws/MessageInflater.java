package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.ProxyReasons;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageDecoder;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Inflates permessage-deflate messages (RFC 7692 section 7.2.2) completely and within a bound, so the scan sees the
 * message the receiver would read: more than {@code maxMessage} inflated bytes fails the connection (1009), corrupt
 * data or bytes after a final block fail it as a protocol error. The sliding window is kept across messages unless
 * the sender's {@code no_context_takeover} was negotiated.
 */
public final class MessageInflater extends MessageToMessageDecoder<WsMessage> {
    public static final String NAME = "ws-inflater";
    private static final byte[] TAIL = {0x00, 0x00, (byte) 0xff, (byte) 0xff};

    private final int maxMessage;
    private final boolean noContextTakeover;
    private Inflater inflater;

    public MessageInflater(int maxMessage, boolean noContextTakeover) {
        super(WsMessage.class);
        this.maxMessage = maxMessage;
        this.noContextTakeover = noContextTakeover;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, WsMessage msg, List<Object> out) {
        if (!msg.compressed()) {
            out.add(msg.retain());
            return;
        }
        byte[] input = new byte[msg.content().readableBytes() + TAIL.length];
        msg.content().getBytes(msg.content().readerIndex(), input, 0, input.length - TAIL.length);
        System.arraycopy(TAIL, 0, input, input.length - TAIL.length, TAIL.length);
        if (inflater == null) {
            inflater = new Inflater(true);
        }
        ByteBuf plain = ctx.alloc().buffer(Math.min(maxMessage, Math.max(256, input.length * 4)));
        try {
            inflate(input, plain);
        } catch (RuntimeException e) {
            plain.release();
            end();
            throw e;
        }
        if (noContextTakeover || inflater.finished()) {
            inflater.reset();
        }
        out.add(msg.withPayload(plain, false));
    }

    private void inflate(byte[] input, ByteBuf plain) {
        inflater.setInput(input);
        byte[] chunk = new byte[16 * 1024];
        try {
            while (true) {
                int n = inflater.inflate(chunk);
                if (n > 0) {
                    if ((long) plain.readableBytes() + n > maxMessage) {
                        throw new WsViolation(
                                WsViolation.TOO_BIG,
                                ProxyReasons.WEBSOCKET_MESSAGE_TOO_BIG,
                                "a compressed message that inflates past the " + maxMessage
                                        + " bytes the proxy inspects",
                                false);
                    }
                    plain.writeBytes(chunk, 0, n);
                    continue;
                }
                if (inflater.needsDictionary()) {
                    throw WsViolation.protocol("compressed data that asks for a preset dictionary");
                }
                // Nothing more comes out: the input is used up, or the stream ended.
                break;
            }
        } catch (DataFormatException e) {
            throw WsViolation.protocol("corrupt compressed data in a message");
        }
        // After a final block only the four bytes the receiver appends may be left: anything else was never read.
        if (inflater.finished() && inflater.getRemaining() > TAIL.length) {
            throw WsViolation.protocol("bytes after the end of a compressed message's final block");
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        end();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        end();
        super.channelInactive(ctx);
    }

    private void end() {
        if (inflater != null) {
            inflater.end();
            inflater = null;
        }
    }
}
