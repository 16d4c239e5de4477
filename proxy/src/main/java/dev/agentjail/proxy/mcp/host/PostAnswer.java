package dev.agentjail.proxy.mcp.host;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * The answer to one POST that carries a request: plain JSON when the server's response is the first thing for it, an
 * event stream (the server's messages, then the response) when the server says something else first. Used on the
 * session's event loop only; the writes go to the bridge connection, which may live on another loop.
 */
final class PostAnswer {
    private final Channel channel;
    private final String session;
    private final boolean close;
    private boolean streaming;
    private boolean done;

    /** {@code session}: the id to announce (on the answer to {@code initialize}), else null. */
    PostAnswer(Channel channel, String session, boolean close) {
        this.channel = channel;
        this.session = session;
        this.close = close;
    }

    Channel channel() {
        return channel;
    }

    boolean done() {
        return done || !channel.isActive();
    }

    /** A server message that comes before the response: the answer becomes an event stream. */
    void event(byte[] json) {
        if (done) {
            return;
        }
        if (!streaming) {
            streaming = true;
            channel.write(BridgeResponses.streamHead(session));
        }
        channel.writeAndFlush(BridgeResponses.event(channel.alloc(), json));
    }

    /** The response: the JSON body, or the stream's last event. */
    void complete(byte[] json) {
        if (done) {
            return;
        }
        done = true;
        if (streaming) {
            channel.write(BridgeResponses.event(channel.alloc(), json));
            finish(channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT));
        } else {
            finish(channel.writeAndFlush(BridgeResponses.json(channel.alloc(), HttpResponseStatus.OK, json, session)));
        }
    }

    private void finish(io.netty.channel.ChannelFuture write) {
        if (close) {
            write.addListener(ChannelFutureListener.CLOSE);
        }
    }
}
