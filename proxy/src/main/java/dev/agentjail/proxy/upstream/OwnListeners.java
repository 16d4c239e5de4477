package dev.agentjail.proxy.upstream;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The TCP ports this proxy listens on, so that it never dials itself: a request or CONNECT to one of its own
 * listeners would loop through the proxy (each turn another exchange, connection and record), and a tunnel to
 * itself turns an allowed address into a second, uninspected way in.
 *
 * <p>An address reaches a listener when it is local to this host (loopback in any spelling, the unspecified
 * address, which Linux connects to the host itself, or an address of a local interface) and its port is one the
 * proxy listens on, whatever address that listener is bound to: a wildcard listener answers on every local
 * address, and refusing a loopback address on the same port of another family costs nothing real.
 */
public final class OwnListeners {
    private final Set<Integer> ports = ConcurrentHashMap.newKeySet();

    /** Records a listening port (from any thread; listeners start while others already serve). */
    public void add(int port) {
        if (port > 0) {
            ports.add(port);
        }
    }

    /** Whether dialling {@code address:port} could reach one of this proxy's own listeners. */
    public boolean reaches(InetAddress address, int port) {
        return ports.contains(port) && isLocal(address);
    }

    private static boolean isLocal(InetAddress address) {
        if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            // Cannot tell: fail closed, it is only ever asked about one of the proxy's own ports.
            return true;
        }
    }
}
