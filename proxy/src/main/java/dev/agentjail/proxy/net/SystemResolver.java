package dev.agentjail.proxy.net;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/** A {@link HostResolver} backed by the operating system's resolver, run on a bounded executor it is given. */
public final class SystemResolver implements HostResolver {

    private final Executor executor;

    /**
     * @param executor runs the blocking lookups; it should be bounded, because a slow DNS server must not be able to
     *     grow threads without limit. When it rejects a task the lookup fails instead of running on the caller.
     */
    public SystemResolver(Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    @Override
    public CompletableFuture<List<InetAddress>> resolve(String canonicalHost) {
        Objects.requireNonNull(canonicalHost, "canonicalHost");
        CompletableFuture<List<InetAddress>> result = new CompletableFuture<>();
        if (canonicalHost.isBlank()) {
            // getAllByName("") answers loopback, which is the last thing an empty host should reach.
            result.completeExceptionally(new UnknownHostException("empty host name"));
            return result;
        }
        try {
            executor.execute(() -> lookup(canonicalHost, result));
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private static void lookup(String host, CompletableFuture<List<InetAddress>> result) {
        try {
            result.complete(List.of(InetAddress.getAllByName(host)));
        } catch (UnknownHostException | RuntimeException e) {
            result.completeExceptionally(e);
        }
    }
}
