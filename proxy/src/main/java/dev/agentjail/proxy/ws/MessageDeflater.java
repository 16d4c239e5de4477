package dev.agentjail.proxy.ws;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;
import java.util.zip.Deflater;

/**
 * Compresses the data messages the proxy sends on, as permessage-deflate was negotiated for this direction (RFC 7692
 * section 7.2.1): the compressed representation of exactly the bytes that were scanned. The JDK's deflater always uses
 * a 32 KiB window, so when the receiver asked for a smaller one ({@code max_window_bits} below 15) messages go
 * uncompressed, which permessage-deflate allows per message.
 */
public final class MessageDeflater extends MessageToMessageEncoder<WsMessage> {
    public static final String NAME = "ws-deflater";
    private static final int TAIL = 4;

    private final boolean noContextTakeover;
    private Deflater deflater;

    public MessageDeflater(boolean noContextTakeover) {
        super(WsMessage.class);
        this.noContextTakeover = noContextTakeover;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, WsMessage msg, List<Object> out) {
        if (msg.isControl() || msg.compressed() || !msg.content().isReadable()) {
            out.add(msg.retain());
            return;
        }
        if (deflater == null) {
            deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        }
        ByteBuf in = msg.content();
        byte[] input = new byte[in.readableBytes()];
        in.getBytes(in.readerIndex(), input);
        deflater.setInput(input);
        ByteBuf compressed = ctx.alloc().buffer(Math.max(64, input.length / 2));
        byte[] chunk = new byte[16 * 1024];
        int n;
        do {
            n = deflater.deflate(chunk, 0, chunk.length, Deflater.SYNC_FLUSH);
            compressed.writeBytes(chunk, 0, n);
        } while (n == chunk.length);
        // A sync flush ends in 00 00 ff ff, which the receiver appends again itself.
        compressed.writerIndex(compressed.writerIndex() - TAIL);
        if (noContextTakeover) {
            deflater.reset();
        }
        out.add(msg.withPayload(compressed, true));
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (deflater != null) {
            deflater.end();
            deflater = null;
        }
    }
}
