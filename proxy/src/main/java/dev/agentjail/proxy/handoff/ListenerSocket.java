package dev.agentjail.proxy.handoff;

import io.netty.channel.ChannelException;
import io.netty.channel.unix.Socket;
import java.io.IOException;
import java.net.InetSocketAddress;

/** Checks that a received descriptor is what agentjail-init promises: a listening TCP socket on loopback. */
final class ListenerSocket {
    // Linux values, the same on x86_64 and aarch64.
    private static final int SOL_SOCKET = 1;
    private static final int SO_TYPE = 3;
    private static final int SO_ACCEPTCONN = 30;
    private static final int SO_DOMAIN = 39;
    private static final int SOCK_STREAM = 1;
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    private ListenerSocket() {}

    /**
     * Throws unless {@code fd} is a listening stream socket of an IP family bound to a loopback address on
     * {@code expectedPort} (any port if 0). Anything else (a file, a Unix socket, a connected socket) would make
     * the proxy accept from, or block on, something that is not the jail's proxy port.
     */
    static void validate(int fd, int expectedPort) throws IOException {
        Socket socket;
        try {
            socket = new Socket(fd);
        } catch (ChannelException e) {
            // Netty asks for the socket's address family right away, which fails on anything but a socket.
            throw new IOException("descriptor is not a listening TCP socket: " + e.getMessage(), e);
        }
        int type = socket.getIntOpt(SOL_SOCKET, SO_TYPE);
        int domain = socket.getIntOpt(SOL_SOCKET, SO_DOMAIN);
        int listening = socket.getIntOpt(SOL_SOCKET, SO_ACCEPTCONN);
        if (type != SOCK_STREAM || (domain != AF_INET && domain != AF_INET6) || listening != 1) {
            throw new IOException("descriptor is not a listening TCP socket (type " + type + ", family " + domain
                    + ", listening " + listening + ")");
        }
        InetSocketAddress local = socket.localAddress();
        if (local == null || !local.getAddress().isLoopbackAddress()) {
            throw new IOException("listener is not bound to loopback: " + local);
        }
        if (expectedPort != 0 && local.getPort() != expectedPort) {
            throw new IOException("listener is bound to port " + local.getPort() + ", expected " + expectedPort);
        }
    }
}
