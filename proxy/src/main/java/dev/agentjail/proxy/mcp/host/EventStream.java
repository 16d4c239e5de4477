package dev.agentjail.proxy.mcp.host;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.LastHttpContent;

/** The stream a GET opens for the server's unsolicited messages; used on the session's event loop only. */
final class EventStream {
    private final Channel channel;
    private boolean ended;

    EventStream(Channel channel) {
        this.channel = channel;
        channel.writeAndFlush(BridgeResponses.streamHead(null));
    }

    Channel channel() {
        return channel;
    }

    boolean open() {
        return !ended && channel.isActive();
    }

    void event(byte[] json) {
        if (open()) {
            channel.writeAndFlush(BridgeResponses.event(channel.alloc(), json));
        }
    }

    /** Ends the stream; the connection closes with it (nothing else was asked on it). */
    void end() {
        if (ended) {
            return;
        }
        ended = true;
        if (channel.isActive()) {
            channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
