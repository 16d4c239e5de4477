package dev.agentjail.proxy.handoff;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** Receives the listeners of one hand-off connection, passes each to the sink and acknowledges it. */
final class HandoffHandler extends ChannelInboundHandlerAdapter {
    /** The byte agentjail-init waits for after each descriptor. */
    static final int ACK = 0x06;

    /** 127.0.0.1 and [::1]: a third descriptor means the peer is not agentjail-init. */
    static final int MAX_LISTENERS = 2;

    private final int expectedUid;
    private final int expectedPort;
    private final ListenerSink sink;
    private final CompletableFuture<Integer> completion;
    private int received;

    HandoffHandler(int expectedUid, int expectedPort, ListenerSink sink, CompletableFuture<Integer> completion) {
        this.expectedUid = expectedUid;
        this.expectedPort = expectedPort;
        this.sink = sink;
        this.completion = completion;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        // The socket's 0700 directory already keeps other users out; this also catches a root-owned impostor when
        // the launcher is not root. A jailed agent launched by us maps back to our own uid, so it passes.
        int uid = ((EpollDomainSocketChannel) ctx.channel()).peerCredentials().uid();
        if (uid != expectedUid) {
            fail(ctx, new IOException("hand-off connection from uid " + uid + ", expected uid " + expectedUid));
            return;
        }
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FileDescriptor descriptor)) {
            ReferenceCountUtil.release(msg);
            fail(
                    ctx,
                    new IOException("unexpected message on the hand-off socket: "
                            + msg.getClass().getName()));
            return;
        }
        int fd = descriptor.intValue();
        try {
            if (++received > MAX_LISTENERS) {
                throw new IOException("more than " + MAX_LISTENERS + " listeners on one hand-off connection");
            }
            ListenerSocket.validate(fd, expectedPort);
            sink.accept(fd);
        } catch (Exception e) {
            closeQuietly(descriptor);
            fail(ctx, e);
            return;
        }
        ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(ACK));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (received > 0) {
            completion.complete(received);
        } else {
            completion.completeExceptionally(new IOException("hand-off connection closed before any listener arrived"));
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(ctx, cause);
    }

    private void fail(ChannelHandlerContext ctx, Throwable cause) {
        // Closing without an ack makes agentjail-init exit 122: the agent never starts without its proxy port.
        completion.completeExceptionally(cause);
        ctx.close();
    }

    private static void closeQuietly(FileDescriptor descriptor) {
        try {
            descriptor.close();
        } catch (IOException ignored) {
            // Already closed or invalid: nothing left to release.
        }
    }
}
