package dev.agentjail.proxy.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http.websocketx.extensions.compression.WebSocketServerCompressionHandler;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.JdkSslContext;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * A real WebSocket server over TLS (Netty's own codec, permessage-deflate accepted) that records every message that
 * arrives whole, as {@code TEXT:...}, {@code BINARY:<hex>} or {@code CLOSE:code}, and answers each text message with
 * {@code reply} applied to it.
 */
public final class WsUpstream implements AutoCloseable {
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final BlockingQueue<String> received = new LinkedBlockingQueue<>();
    private final Channel server;

    public WsUpstream(SSLContext tls, java.util.function.UnaryOperator<String> reply) throws InterruptedException {
        JdkSslContext ssl = new JdkSslContext(tls, false, ClientAuth.NONE);
        server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(ssl.newHandler(ch.alloc()))
                                .addLast(new HttpServerCodec())
                                .addLast(new HttpObjectAggregator(65536))
                                .addLast(new WebSocketServerCompressionHandler(0))
                                .addLast(new WebSocketServerProtocolHandler("/ws", null, true, 1 << 22))
                                .addLast(new WebSocketFrameAggregator(1 << 22))
                                .addLast(new Recorder(reply));
                    }
                })
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .sync()
                .channel();
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** The next message that arrived, or null after {@code seconds}. */
    public String take(int seconds) throws InterruptedException {
        return received.poll(seconds, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        server.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private final class Recorder extends SimpleChannelInboundHandler<WebSocketFrame> {
        private final java.util.function.UnaryOperator<String> reply;

        Recorder(java.util.function.UnaryOperator<String> reply) {
            this.reply = reply;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
            if (frame instanceof TextWebSocketFrame t) {
                received.add("TEXT:" + t.text());
                String answer = reply.apply(t.text());
                if (answer != null) {
                    ctx.writeAndFlush(new TextWebSocketFrame(answer));
                    ctx.writeAndFlush(new BinaryWebSocketFrame(Unpooled.copiedBuffer(answer, StandardCharsets.UTF_8)));
                }
            } else if (frame instanceof BinaryWebSocketFrame b) {
                received.add("BINARY:" + ByteBufUtil.hexDump(b.content()));
            } else if (frame instanceof CloseWebSocketFrame c) {
                received.add("CLOSE:" + c.statusCode());
            }
        }
    }
}
