package dev.agentjail.proxy.handoff;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ListenerHandoffTest {
    private static final byte[] PING = "ping".getBytes(StandardCharsets.US_ASCII);

    private static EventLoopGroup group;

    @TempDir
    Path dir;

    @BeforeAll
    static void startGroup() {
        group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
    }

    @AfterAll
    static void stopGroup() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void handedOffListenerServesConnectionsThroughTheProxyBootstrap() throws Exception {
        Channel original = listener();
        int port = ((InetSocketAddress) original.localAddress()).getPort();
        List<Channel> registered = new CopyOnWriteArrayList<>();
        ListenerSink sink = fd -> registered.add(
                HandedOffListener.register(echoBootstrap(), fd).sync().channel());
        try (ListenerHandoff handoff = ListenerHandoff.bind(group, dir.resolve("h.sock"), port, sink)) {
            FakeInit init = FakeInit.connect(handoff.socketPath());
            init.send(fdOf(original));
            assertEquals(HandoffHandler.ACK, init.nextByte(), "the host acknowledges the listener");
            init.close();
            assertEquals(1, handoff.completion().get(5, TimeUnit.SECONDS));
            // The jail's own copy is gone now; only the proxy's channel can accept.
            original.close().sync();

            assertArrayEquals(PING, echo(port));
            assertArrayEquals(PING, echo(port));
            assertEquals(1, registered.size());
            assertFalse(Files.exists(handoff.socketPath()), "the one-shot socket file is removed once claimed");
        } finally {
            for (Channel channel : registered) {
                channel.close().sync();
            }
        }
    }

    @Test
    void aSecondConnectionIsRefused() throws Exception {
        Channel original = listener();
        int port = ((InetSocketAddress) original.localAddress()).getPort();
        try (ListenerHandoff handoff = ListenerHandoff.bind(group, dir.resolve("h.sock"), port, fd -> closeFd(fd))) {
            FakeInit first = FakeInit.connect(handoff.socketPath());
            first.send(fdOf(original));
            assertEquals(HandoffHandler.ACK, first.nextByte());
            assertThrows(Exception.class, () -> FakeInit.connect(handoff.socketPath()), "the server is gone");
            first.close();
        } finally {
            original.close().sync();
        }
    }

    @Test
    void aFileDescriptorThatIsNotAListenerIsRejectedWithoutAck() throws Exception {
        Path file = Files.writeString(dir.resolve("not-a-socket"), "x");
        List<Integer> accepted = new CopyOnWriteArrayList<>();
        try (ListenerHandoff handoff = ListenerHandoff.bind(group, dir.resolve("h.sock"), 0, accepted::add)) {
            FakeInit init = FakeInit.connect(handoff.socketPath());
            FileDescriptor descriptor = FileDescriptor.from(file.toFile());
            init.send(descriptor.intValue());
            assertEquals(-1, init.nextByte(), "closed without an ack");
            ExecutionException failure = assertThrows(
                    ExecutionException.class, () -> handoff.completion().get(5, TimeUnit.SECONDS));
            assertTrue(failure.getCause().getMessage().contains("not a listening TCP socket"), failure::toString);
            assertTrue(accepted.isEmpty());
            descriptor.close();
        }
    }

    @Test
    void aListenerOnAnotherPortIsRejected() throws Exception {
        Channel original = listener();
        int port = ((InetSocketAddress) original.localAddress()).getPort();
        try (ListenerHandoff handoff =
                ListenerHandoff.bind(group, dir.resolve("h.sock"), port == 65535 ? 1 : port + 1, fd -> closeFd(fd))) {
            FakeInit init = FakeInit.connect(handoff.socketPath());
            init.send(fdOf(original));
            assertEquals(-1, init.nextByte());
            ExecutionException failure = assertThrows(
                    ExecutionException.class, () -> handoff.completion().get(5, TimeUnit.SECONDS));
            assertTrue(failure.getCause().getMessage().contains("expected"), failure::toString);
        } finally {
            original.close().sync();
        }
    }

    @Test
    void aPeerOfAnotherUidIsRefused() throws Exception {
        int self = (Integer) Files.getAttribute(dir, "unix:uid");
        try (ListenerHandoff handoff =
                ListenerHandoff.bind(group, dir.resolve("h.sock"), 0, fd -> closeFd(fd), self + 4242)) {
            FakeInit init = FakeInit.connect(handoff.socketPath());
            assertEquals(-1, init.nextByte(), "closed before any descriptor");
            ExecutionException failure = assertThrows(
                    ExecutionException.class, () -> handoff.completion().get(5, TimeUnit.SECONDS));
            assertTrue(failure.getCause().getMessage().contains("uid " + self), failure::toString);
        }
    }

    @Test
    void aSinkFailureClosesTheDescriptorAndWithholdsTheAck() throws Exception {
        Channel original = listener();
        int port = ((InetSocketAddress) original.localAddress()).getPort();
        ListenerSink failing = fd -> {
            throw new IllegalStateException("proxy not ready");
        };
        try (ListenerHandoff handoff = ListenerHandoff.bind(group, dir.resolve("h.sock"), port, failing)) {
            FakeInit init = FakeInit.connect(handoff.socketPath());
            init.send(fdOf(original));
            assertEquals(-1, init.nextByte());
            assertThrows(ExecutionException.class, () -> handoff.completion().get(5, TimeUnit.SECONDS));
        } finally {
            original.close().sync();
        }
    }

    @Test
    void refusesADirectoryOthersCanEnter() throws Exception {
        Path shared = Files.createDirectory(
                dir.resolve("shared"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-x---")));
        IOException e = assertThrows(
                IOException.class, () -> ListenerHandoff.bind(group, shared.resolve("h.sock"), 0, fd -> closeFd(fd)));
        assertTrue(e.getMessage().contains("0700"), e::getMessage);
    }

    @Test
    void closeBeforeAnyHandoffFailsTheCompletion() throws Exception {
        ListenerHandoff handoff = ListenerHandoff.bind(group, dir.resolve("h.sock"), 0, fd -> closeFd(fd));
        handoff.close();
        assertFalse(Files.exists(dir.resolve("h.sock")));
        assertThrows(CompletionException.class, () -> handoff.completion().join());
    }

    /** A listening socket of our own, standing in for the one agentjail-init creates inside the jail. */
    private static Channel listener() throws InterruptedException {
        // autoRead off: this channel must never accept, only the handed-off copy may.
        return new ServerBootstrap()
                .group(group)
                .channel(EpollServerSocketChannel.class)
                .option(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInboundHandlerAdapter())
                .bind("127.0.0.1", 0)
                .sync()
                .channel();
    }

    private static int fdOf(Channel channel) {
        return ((EpollServerSocketChannel) channel).fd().intValue();
    }

    private static ServerBootstrap echoBootstrap() {
        return new ServerBootstrap().group(group).childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ctx.writeAndFlush(msg);
                    }
                });
            }
        });
    }

    private static byte[] echo(int port) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(PING);
            out.flush();
            InputStream in = socket.getInputStream();
            return in.readNBytes(PING.length);
        }
    }

    private static void closeFd(int fd) throws IOException {
        new FileDescriptor(fd).close();
    }

    /** Plays agentjail-init's side of the protocol: one descriptor per message, one ack byte per descriptor. */
    private static final class FakeInit {
        private final Channel channel;
        private final BlockingQueue<Integer> bytes;

        private FakeInit(Channel channel, BlockingQueue<Integer> bytes) {
            this.channel = channel;
            this.bytes = bytes;
        }

        static FakeInit connect(Path socket) throws InterruptedException {
            BlockingQueue<Integer> bytes = new LinkedBlockingQueue<>();
            Channel channel = new Bootstrap()
                    .group(group)
                    .channel(EpollDomainSocketChannel.class)
                    .handler(new SimpleChannelInboundHandler<ByteBuf>() {
                        @Override
                        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                            while (msg.isReadable()) {
                                bytes.add((int) msg.readByte());
                            }
                        }

                        @Override
                        public void channelInactive(ChannelHandlerContext ctx) {
                            bytes.add(-1);
                        }
                    })
                    .connect(new DomainSocketAddress(socket.toFile()))
                    .sync()
                    .channel();
            return new FakeInit(channel, bytes);
        }

        void send(int fd) throws InterruptedException {
            // Netty sends a FileDescriptor message with SCM_RIGHTS; the kernel dups it into the receiver.
            channel.writeAndFlush(new FileDescriptor(fd) {
                        @Override
                        public void close() {
                            // The test still owns the descriptor; Netty must not close it after sending.
                        }
                    })
                    .sync();
        }

        int nextByte() throws InterruptedException {
            Integer next = bytes.poll(5, TimeUnit.SECONDS);
            if (next == null) {
                throw new AssertionError("no answer from the hand-off socket within 5 s");
            }
            return next;
        }

        void close() throws InterruptedException {
            channel.close().sync();
        }
    }
}
