package dev.agentjail.proxy.handoff;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.DomainSocketReadMode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The host end of the jail's network bridge: a one-shot Unix socket on which agentjail-init, running inside the
 * jail's network namespace, passes its loopback listeners (SCM_RIGHTS) to the proxy.
 */
public final class ListenerHandoff implements AutoCloseable {
    /** Name of the per-connection handler in the hand-off channel's pipeline. */
    public static final String HANDLER_NAME = "listener-handoff";

    private final Channel server;
    private final Path socketPath;
    private final CompletableFuture<Integer> completion;

    private ListenerHandoff(Channel server, Path socketPath, CompletableFuture<Integer> completion) {
        this.server = server;
        this.socketPath = socketPath;
        this.completion = completion;
    }

    /**
     * Binds the hand-off socket at {@code socketPath}, whose parent must be a directory private to this user
     * (no group or other permissions), and serves exactly one connection from this user's uid. Run as root, the
     * directory may belong to the user the jail runs as: its owner is the uid the peer must present, and the
     * socket is handed to that user.
     *
     * @param group an epoll event loop group (Unix sockets and descriptor passing need the epoll transport)
     * @param expectedPort the port the listeners must be bound to inside the jail; 0 accepts any
     * @param sink receives each listener; see {@link HandedOffListener#register}
     */
    public static ListenerHandoff bind(EventLoopGroup group, Path socketPath, int expectedPort, ListenerSink sink)
            throws IOException, InterruptedException {
        return bind(group, socketPath, expectedPort, sink, null);
    }

    /**
     * As above for a jail that audits its execs and file changes: after the listeners, the connection carries one
     * seccomp notifier, which goes to {@code notifiers}; the hand-off fails without it.
     */
    public static ListenerHandoff bind(
            EventLoopGroup group, Path socketPath, int expectedPort, ListenerSink sink, NotifierSink notifiers)
            throws IOException, InterruptedException {
        // The directory's owner is the uid a legitimate peer presents: a jailed agent we launched maps back to it.
        return bind(group, socketPath, expectedPort, sink, notifiers, requirePrivateDirectory(socketPath.getParent()));
    }

    /** As above with an explicit peer uid; tests use it to see a peer of the wrong uid refused. */
    static ListenerHandoff bind(
            EventLoopGroup group, Path socketPath, int expectedPort, ListenerSink sink, int expectedUid)
            throws IOException, InterruptedException {
        return bind(group, socketPath, expectedPort, sink, null, expectedUid);
    }

    private static ListenerHandoff bind(
            EventLoopGroup group,
            Path socketPath,
            int expectedPort,
            ListenerSink sink,
            NotifierSink notifiers,
            int expectedUid)
            throws IOException, InterruptedException {
        if (!Epoll.isAvailable()) {
            throw new IOException("the epoll transport is unavailable", Epoll.unavailabilityCause());
        }
        int directoryOwner = requirePrivateDirectory(socketPath.getParent());
        CompletableFuture<Integer> completion = new CompletableFuture<>();
        AtomicBoolean claimed = new AtomicBoolean();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(EpollServerDomainSocketChannel.class)
                .childOption(EpollChannelOption.DOMAIN_SOCKET_READ_MODE, DomainSocketReadMode.FILE_DESCRIPTORS)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // One connection only: one that slips in before the server is closed is refused.
                        if (!claimed.compareAndSet(false, true)) {
                            ch.close();
                            return;
                        }
                        ch.parent().close();
                        ch.pipeline()
                                .addLast(
                                        HANDLER_NAME,
                                        new HandoffHandler(expectedUid, expectedPort, sink, notifiers, completion));
                    }
                });
        Channel server;
        try {
            server = bootstrap
                    .bind(new DomainSocketAddress(socketPath.toFile()))
                    .sync()
                    .channel();
        } catch (Exception e) {
            throw new IOException("cannot bind the hand-off socket " + socketPath, e);
        }
        server.closeFuture().addListener(f -> Files.deleteIfExists(socketPath));
        ListenerHandoff handoff = new ListenerHandoff(server, socketPath, completion);
        // The socket file carries our fsuid: a directory owned by someone else is not ours to trust, unless we are
        // root serving a jail that runs as that directory's owner (root may do anything that user may).
        int ownUid = (Integer) Files.getAttribute(socketPath, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (ownUid != directoryOwner && ownUid != 0) {
            handoff.close();
            throw new IOException("the hand-off socket's directory belongs to uid " + directoryOwner
                    + ", not to this process (uid " + ownUid + ")");
        }
        if (ownUid != directoryOwner) {
            // connect(2) needs write permission on the socket file: the jail's user gets it, no one else.
            try {
                Files.setAttribute(socketPath, "unix:uid", directoryOwner, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                handoff.close();
                throw e;
            }
        }
        return handoff;
    }

    public Path socketPath() {
        return socketPath;
    }

    /**
     * Completes with the number of listeners once the hand-off connection has closed after handing over at least
     * one; completes exceptionally if the peer, a descriptor or the sink was rejected.
     */
    public CompletableFuture<Integer> completion() {
        return completion;
    }

    /** Stops waiting for a hand-off and removes the socket file; listeners already handed over stay open. */
    @Override
    public void close() throws IOException {
        server.close().syncUninterruptibly();
        Files.deleteIfExists(socketPath);
        completion.completeExceptionally(new IOException("hand-off closed before a listener arrived"));
    }

    /** Returns the directory owner's uid. */
    private static int requirePrivateDirectory(Path dir) throws IOException {
        if (dir == null || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("the hand-off socket needs an existing private directory, not " + dir);
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
        if (!Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE)
                .containsAll(perms)) {
            throw new IOException(
                    "the hand-off socket's directory " + dir + " must be accessible to its owner only (0700)");
        }
        return (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    }
}
