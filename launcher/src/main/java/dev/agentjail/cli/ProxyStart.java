package dev.agentjail.cli;

import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.ProxyServer;
import dev.agentjail.proxy.handoff.ListenerHandoff;
import dev.agentjail.proxy.handoff.NotifierSink;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * A session's proxy, started on a thread of its own: Netty's event loops and the jail's hand-off listener come up
 * while the session's thread prepares the jail, so on two cores the two halves of a session's set-up overlap.
 * {@link #await()} gives the running proxy (or the reason it could not start); {@link #close()} stops whatever was
 * started, whether or not anyone waited for it.
 */
final class ProxyStart implements AutoCloseable {
    /** The running proxy and the listener the jail's init hands its socket to. */
    record Running(ProxyServer server, ListenerHandoff handoff) {}

    private final CompletableFuture<Running> running;

    private ProxyStart(CompletableFuture<Running> running) {
        this.running = running;
    }

    /** Starts building the proxy for {@code config} and listening for the hand-off at {@code handoffSocket}. */
    static ProxyStart begin(ProxyConfig config, Path handoffSocket, int port) {
        return begin(config, handoffSocket, port, null);
    }

    /** As above for a jail that audits: its seccomp notifier goes to {@code notifiers}. */
    static ProxyStart begin(ProxyConfig config, Path handoffSocket, int port, NotifierSink notifiers) {
        CompletableFuture<Running> running = new CompletableFuture<>();
        Thread thread = new Thread(
                () -> {
                    try {
                        running.complete(start(config, handoffSocket, port, notifiers));
                    } catch (Throwable e) {
                        running.completeExceptionally(e);
                    }
                },
                "agentjail-proxy-start");
        thread.setDaemon(true);
        thread.start();
        return new ProxyStart(running);
    }

    private static Running start(ProxyConfig config, Path handoffSocket, int port, NotifierSink notifiers)
            throws Exception {
        ProxyServer server = new ProxyServer(config);
        try {
            return new Running(server, server.acceptHandoff(handoffSocket, port, notifiers));
        } catch (Exception | Error e) {
            server.close();
            throw e;
        }
    }

    /** Waits for the proxy; throws what stopped it from starting. */
    Running await() throws Exception {
        try {
            return running.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /** Stops the proxy once it has started (waiting for the start if it is still under way); a failed start left nothing. */
    @Override
    public void close() throws IOException {
        Running started;
        try {
            started = running.join();
        } catch (CompletionException | CancellationException e) {
            return;
        }
        try {
            started.handoff().close();
        } finally {
            started.server().close();
        }
    }
}
