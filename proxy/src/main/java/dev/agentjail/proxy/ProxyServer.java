package dev.agentjail.proxy;

import dev.agentjail.proxy.handoff.HandedOffListener;
import dev.agentjail.proxy.handoff.ListenerHandoff;
import dev.agentjail.proxy.handoff.NotifierSink;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.inspect.Inspector;
import dev.agentjail.proxy.mcp.McpGate;
import dev.agentjail.proxy.mcp.host.HostBridge;
import dev.agentjail.proxy.mcp.host.HostEndpoints;
import dev.agentjail.proxy.route.RequestRouter;
import dev.agentjail.proxy.upstream.Dialer;
import dev.agentjail.proxy.upstream.OwnListeners;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The proxy server: owns the event loops and the listeners (TCP, Unix socket, or a listening socket
 * handed over from inside a jail) and gives every accepted connection the request pipeline.
 */
public final class ProxyServer implements AutoCloseable {
    static final String DECODER = "decoder";
    static final String TIMEOUTS = "timeouts";

    private final ProxyRuntime runtime;
    private final EventLoopGroup group;
    private final boolean epoll;
    private final List<Channel> listeners = new CopyOnWriteArrayList<>();
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final HostBridge bridge;
    private final OwnListeners own = new OwnListeners();

    public ProxyServer(ProxyConfig config) {
        this.epoll = Epoll.isAvailable();
        this.group = new MultiThreadIoEventLoopGroup(
                config.ioThreads(), epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        Class<? extends Channel> clientClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.bridge = startBridge(config);
        this.runtime = new ProxyRuntime(
                config,
                new RequestRouter(config.network(), bridge),
                new Dialer(
                        config.network(),
                        config.resolver(),
                        clientClass,
                        config.timeouts().connect(),
                        bridge,
                        own),
                Inspector.of(config.inspection()),
                // Host-side servers are inspected at their synthetic URLs exactly like remote ones.
                McpGate.of(HostEndpoints.asUrlServers(config.mcp())));
    }

    /** The bridge to host-side MCP servers, when the policy has any; their processes start on first use. */
    private HostBridge startBridge(ProxyConfig config) {
        if (HostEndpoints.hostServers(config.mcp()).isEmpty()) {
            return null;
        }
        try {
            return HostBridge.start(config.mcp(), config.hostEnv(), group, epoll, new SecureRandom());
        } catch (Exception e) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("cannot start the bridge to host-side MCP servers: " + e.getMessage(), e);
        }
    }

    /** The bridge to host-side MCP servers, or null when the policy has none (tests). */
    public HostBridge hostBridge() {
        return bridge;
    }

    /** Listens on a TCP address (port 0 picks a free port) and returns the bound address. */
    public InetSocketAddress listen(InetSocketAddress address) throws InterruptedException {
        Class<? extends ServerChannel> serverClass =
                epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        Channel ch = bootstrap()
                .channel(serverClass)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .bind(address)
                .sync()
                .channel();
        listeners.add(ch);
        InetSocketAddress bound = (InetSocketAddress) ch.localAddress();
        own.add(bound.getPort());
        return bound;
    }

    /** Listens on a Unix domain socket at {@code path} (Linux only); the file is replaced if present. */
    public void listenUnix(Path path) throws Exception {
        if (!epoll) {
            throw new IllegalStateException("Unix socket listeners need the native epoll transport");
        }
        Files.deleteIfExists(path);
        Channel ch = bootstrap()
                .channel(EpollServerDomainSocketChannel.class)
                .bind(new DomainSocketAddress(path.toFile()))
                .sync()
                .channel();
        listeners.add(ch);
    }

    /** Serves connections accepted on an already bound and listening TCP socket, such as one handed over from a jail. */
    public void adopt(int fd) throws InterruptedException {
        if (!epoll) {
            throw new IllegalStateException("adopting a listening socket needs the native epoll transport");
        }
        Channel ch = bootstrap()
                .channelFactory(() -> new EpollServerSocketChannel(fd))
                .childOption(ChannelOption.TCP_NODELAY, true)
                .register()
                .sync()
                .channel();
        listeners.add(ch);
        if (ch.localAddress() instanceof InetSocketAddress bound) {
            own.add(bound.getPort());
        }
    }

    /**
     * Waits on a one-shot Unix socket at {@code socketPath} for a jail to hand over its listening socket on
     * {@code expectedPort}, and serves it like any other listener.
     */
    public ListenerHandoff acceptHandoff(Path socketPath, int expectedPort) throws Exception {
        return acceptHandoff(socketPath, expectedPort, null);
    }

    /**
     * As above for a jail that audits its execs and file changes: its seccomp notifier goes to {@code notifiers}
     * (null: the jail does not audit).
     */
    public ListenerHandoff acceptHandoff(Path socketPath, int expectedPort, NotifierSink notifiers) throws Exception {
        if (!epoll) {
            throw new IllegalStateException("the jail hand-off needs the native epoll transport");
        }
        // Inside the jail's own network namespace, but the same port here would still be this proxy's to refuse.
        own.add(expectedPort);
        ServerBootstrap template = bootstrap().childOption(ChannelOption.TCP_NODELAY, true);
        return ListenerHandoff.bind(
                group,
                socketPath,
                expectedPort,
                fd -> {
                    // Called on an event loop: register without waiting.
                    HandedOffListener.register(template, fd).addListener(f -> {
                        if (f.isSuccess()) {
                            listeners.add(((io.netty.channel.ChannelFuture) f).channel());
                        }
                    });
                },
                notifiers);
    }

    private ServerBootstrap bootstrap() {
        return new ServerBootstrap()
                .group(group)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        connections.add(ch);
                        ProxyResponseEncoder encoder = new ProxyResponseEncoder();
                        ch.pipeline()
                                .addLast(
                                        DECODER,
                                        new StrictRequestDecoder(
                                                runtime.config().limits()))
                                .addLast(TIMEOUTS, new ClientTimeouts(runtime.timeouts()))
                                .addLast(ProxyResponseEncoder.NAME, encoder);
                        ClientPipeline.install(ch.pipeline(), runtime, encoder, runtime.router(), null, null);
                    }
                });
    }

    @Override
    public void close() {
        for (Channel ch : listeners) {
            ch.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        // Closing the connections before the loops stop lets every open exchange and tunnel write its record.
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (bridge != null) {
            // Before the loops stop: each session's process is stopped (group TERM, then KILL) and reaped.
            bridge.close();
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
