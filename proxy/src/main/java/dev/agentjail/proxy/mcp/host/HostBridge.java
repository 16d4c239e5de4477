package dev.agentjail.proxy.mcp.host;

import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.upstream.DialOutcome;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.Promise;
import java.io.IOException;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The bridge to host-side MCP servers ({@code mcp.servers[].command}): a Streamable HTTP endpoint per server, served
 * on a Unix socket in a private directory, that the proxy dials for {@code http://NAME.mcp.agentjail.internal/mcp}
 * after its usual MCP inspection. Each connection starts with a random token only the proxy knows. Processes start
 * with the first session of their server, so a session that never uses MCP costs nothing but the socket.
 */
public final class HostBridge implements AutoCloseable {
    /** The largest request body: the proxy's MCP inspection allows 4 MiB, and a little framing room. */
    static final int MAX_BODY = (4 << 20) + 1024;

    private static final String CODEC = "mcp-host-codec";
    private static final String AGGREGATOR = "mcp-host-aggregator";
    private static final int TOKEN_BYTES = 32;

    private final Map<String, HostServer> servers;
    private final boolean epoll;
    private final byte[] token;
    private final Path dir;
    private final SocketAddress address;
    private final Channel listener;

    private HostBridge(
            Map<String, HostServer> servers,
            boolean epoll,
            byte[] token,
            Path dir,
            SocketAddress address,
            Channel listener) {
        this.servers = servers;
        this.epoll = epoll;
        this.token = token;
        this.dir = dir;
        this.address = address;
        this.listener = listener;
    }

    /**
     * Listens for the host-side servers of {@code policy} on {@code group} (epoll or NIO, as {@code epoll} says).
     * {@code hostEnv} is the environment the servers' minimal environments and {@code ${NAME}} references come from.
     */
    public static HostBridge start(
            McpPolicy policy, Map<String, String> hostEnv, EventLoopGroup group, boolean epoll, SecureRandom random)
            throws IOException, InterruptedException {
        Map<String, HostServer> servers = new LinkedHashMap<>();
        HostEndpoints.byHost(policy)
                .forEach((host, server) -> servers.put(host, new HostServer(server, hostEnv, random)));
        byte[] token = new byte[TOKEN_BYTES];
        random.nextBytes(token);
        Path dir = Files.createTempDirectory(
                "agentjail-mcp-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path socket = dir.resolve("bridge.sock");
        SocketAddress address = epoll ? new DomainSocketAddress(socket.toFile()) : UnixDomainSocketAddress.of(socket);
        Map<String, HostServer> shared = Map.copyOf(servers);
        ChannelFuture bound = new ServerBootstrap()
                .group(group)
                .channel(epoll ? EpollServerDomainSocketChannel.class : NioServerDomainSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline()
                                .addLast(TokenGate.NAME, new TokenGate(token))
                                .addLast(CODEC, new HttpServerCodec())
                                .addLast(AGGREGATOR, new HttpObjectAggregator(MAX_BODY))
                                .addLast(BridgeHandler.NAME, new BridgeHandler(shared));
                    }
                })
                .bind(address)
                .await();
        if (!bound.isSuccess()) {
            Files.deleteIfExists(dir);
            throw new IOException(
                    "cannot listen on " + socket + ": " + bound.cause().getMessage(), bound.cause());
        }
        return new HostBridge(shared, epoll, token, dir, address, bound.channel());
    }

    /** Whether {@code target} is a configured host-side server's endpoint host (plain HTTP, port 80). */
    public boolean serves(Target target) {
        return target.kind() == HostKind.DNS
                && target.port() == HostEndpoints.PORT
                && servers.containsKey(target.host());
    }

    /** The server behind a canonical host name, or null. */
    public String serverName(String canonicalHost) {
        HostServer s = servers.get(canonicalHost);
        return s == null ? null : s.name();
    }

    /**
     * Connects to the bridge on {@code loop} with {@code initializer}'s pipeline (the proxy's usual upstream HTTP
     * client), sends the token ahead of the first request, and completes {@code promise} as any dial does. Only for
     * targets {@link #serves} accepts.
     */
    public void connect(EventLoop loop, ChannelHandler initializer, Promise<DialOutcome> promise) {
        ChannelFuture f = new Bootstrap()
                .group(loop)
                .channel(epoll ? EpollDomainSocketChannel.class : NioDomainSocketChannel.class)
                .option(ChannelOption.AUTO_READ, false)
                .handler(initializer)
                .connect(address);
        f.addListener(done -> {
            if (!done.isSuccess()) {
                promise.trySuccess(new DialOutcome.Failed(
                        HttpResponseStatus.BAD_GATEWAY,
                        HostErrors.REASON_UNAVAILABLE,
                        "the bridge to host-side MCP servers is not available",
                        null));
                return;
            }
            Channel ch = f.channel();
            // Past the HTTP codec, straight to the socket: the token precedes the first request's bytes.
            ch.pipeline().firstContext().writeAndFlush(Unpooled.wrappedBuffer(token.clone()));
            promise.trySuccess(new DialOutcome.Connected(ch, null));
        });
    }

    /** The live sessions' process ids of server {@code name} (tests). */
    List<Long> pids(String name) {
        for (HostServer s : servers.values()) {
            if (s.name().equals(name)) {
                return s.sessions().stream()
                        .filter(x -> x.child() != null)
                        .map(x -> x.child().pid())
                        .toList();
            }
        }
        return List.of();
    }

    /** Stops listening and stops every server process (TERM, then KILL), waiting a few seconds for them to go. */
    @Override
    public void close() {
        listener.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        List<CompletableFuture<Void>> stops =
                servers.values().stream().flatMap(s -> s.close().stream()).toList();
        try {
            CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            // Each stop ends in KILL; what is left now is beyond what waiting would fix.
        }
        try {
            Files.deleteIfExists(dir.resolve("bridge.sock"));
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // A private, empty directory in the temporary directory: harmless if it stays.
        }
    }
}
