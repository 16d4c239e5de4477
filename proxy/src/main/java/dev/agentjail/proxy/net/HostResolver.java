package dev.agentjail.proxy.net;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Resolves a canonical host name to every address it has, without blocking the caller. */
@FunctionalInterface
public interface HostResolver {

    /**
     * Resolves {@code canonicalHost}; the future fails with {@link java.net.UnknownHostException} when the name does
     * not exist. Callers classify every returned address and dial only ones they checked.
     */
    CompletableFuture<List<InetAddress>> resolve(String canonicalHost);
}
