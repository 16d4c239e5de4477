package dev.agentjail.proxy.handoff;

/** Takes over a listening socket that a jail handed to the host proxy. */
@FunctionalInterface
public interface ListenerSink {
    /**
     * Called on the hand-off channel's event loop with a validated, non-blocking listening TCP socket bound to
     * the jail's loopback. Returning normally transfers ownership of {@code fd} (see {@link
     * HandedOffListener#register}); throwing makes the hand-off close it and fail, which stops the jail.
     */
    void accept(int fd) throws Exception;
}
