package dev.agentjail.proxy.handoff;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * Receives the listeners of one hand-off connection, passes each to the sink and acknowledges it; and, when the jail
 * audits its execs and file changes, the one seccomp notifier that comes after them.
 */
final class HandoffHandler extends ChannelInboundHandlerAdapter {
    /** The byte agentjail-init waits for after each descriptor. */
    static final int ACK = 0x06;

    /** 127.0.0.1 and [::1]: a third descriptor means the peer is not agentjail-init. */
    static final int MAX_LISTENERS = 2;

    private final int expectedUid;
    private final int expectedPort;
    private final ListenerSink sink;
    private final NotifierSink notifiers;
    private final CompletableFuture<Integer> completion;
    private int received;
    private boolean notifierReceived;

    /**
     * @param notifiers takes the audit's seccomp notifier; null when the jail does not audit, which makes a notifier
     *     on the connection a failure
     */
    HandoffHandler(
            int expectedUid,
            int expectedPort,
            ListenerSink sink,
            NotifierSink notifiers,
            CompletableFuture<Integer> completion) {
        this.expectedUid = expectedUid;
        this.expectedPort = expectedPort;
        this.sink = sink;
        this.notifiers = notifiers;
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
            if (SeccompNotifier.is(fd)) {
                if (notifiers == null) {
                    throw new IOException("a seccomp notifier on the hand-off socket of a jail that does not audit");
                }
                if (notifierReceived) {
                    throw new IOException("more than one seccomp notifier on one hand-off connection");
                }
                notifierReceived = true;
                notifiers.accept(fd);
                ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(ACK));
                return;
            }
            if (notifierReceived) {
                throw new IOException("a descriptor after the seccomp notifier on the hand-off socket");
            }
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
        if (received > 0 && notifiers != null && !notifierReceived) {
            completion.completeExceptionally(
                    new IOException("hand-off connection closed before the audit's seccomp notifier arrived"));
        } else if (received > 0) {
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
