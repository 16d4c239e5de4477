package dev.agentjail.proxy.handoff;

/**
 * Takes over the seccomp notification descriptor of a jail's exec and file audit (docs/jail.md "Exec and file audit"),
 * which agentjail-init hands over on the same connection as its listeners.
 */
@FunctionalInterface
public interface NotifierSink {
    /**
     * Called on the hand-off channel's event loop with a descriptor checked to be a seccomp notifier. Returning
     * normally transfers ownership of {@code fd}; throwing makes the hand-off close it and fail, which stops the jail.
     */
    void accept(int fd) throws Exception;
}
