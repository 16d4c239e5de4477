package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.inspect.ResponseScrubber;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import java.util.random.RandomGenerator;

/**
 * Draws the two pipelines of an accepted WebSocket: each side's bytes become frames, whole messages, inflated, checked,
 * then inspected (client to server: redacted or blocked; server to client: scrubbed of the host's credentials) and
 * relayed, to be deflated again as negotiated and framed anew. Nothing of the original bytes is forwarded.
 */
public final class WebSocketPipeline {
    /** The largest message, before and after inflating, the proxy reads; larger ones fail the connection (1009). */
    public static final int MAX_MESSAGE = 16 * 1024 * 1024;

    private WebSocketPipeline() {}

    /**
     * Adds the handlers at the end of both pipelines (the caller then removes the HTTP handlers in front of them).
     *
     * @param scrubber the credentials of this host to keep out of the upstream's messages; null when it has none
     */
    public static void install(
            Channel client,
            Channel upstream,
            Extensions ext,
            MessageRedaction redaction,
            ResponseScrubber scrubber,
            WsLedger ledger,
            RandomGenerator masks,
            int maxMessage) {
        ChannelPipeline cp = client.pipeline();
        cp.addLast(FrameEncoder.NAME, new FrameEncoder(null));
        if (ext.deflate() && ext.serverMaxWindowBits() == 15) {
            cp.addLast(MessageDeflater.NAME, new MessageDeflater(ext.serverNoContextTakeover()));
        }
        cp.addLast(FrameDecoder.NAME, new FrameDecoder(true, ext.deflate(), maxMessage));
        cp.addLast(MessageAssembler.NAME, new MessageAssembler(maxMessage));
        if (ext.deflate()) {
            cp.addLast(MessageInflater.NAME, new MessageInflater(maxMessage, ext.clientNoContextTakeover()));
        }
        cp.addLast(PayloadCheck.NAME, new PayloadCheck());
        cp.addLast(ClientMessageInspector.NAME, new ClientMessageInspector(redaction, ledger));
        cp.addLast(MessageRelay.NAME, new MessageRelay(upstream, ledger, true));

        ChannelPipeline up = upstream.pipeline();
        up.addLast(FrameEncoder.NAME, new FrameEncoder(masks));
        if (ext.deflate() && ext.clientMaxWindowBits() == 15) {
            up.addLast(MessageDeflater.NAME, new MessageDeflater(ext.clientNoContextTakeover()));
        }
        up.addLast(FrameDecoder.NAME, new FrameDecoder(false, ext.deflate(), maxMessage));
        up.addLast(MessageAssembler.NAME, new MessageAssembler(maxMessage));
        if (ext.deflate()) {
            up.addLast(MessageInflater.NAME, new MessageInflater(maxMessage, ext.serverNoContextTakeover()));
        }
        up.addLast(PayloadCheck.NAME, new PayloadCheck());
        if (scrubber != null) {
            up.addLast(ServerMessageScrubber.NAME, new ServerMessageScrubber(scrubber));
        }
        up.addLast(MessageRelay.NAME, new MessageRelay(client, ledger, false));
    }
}
