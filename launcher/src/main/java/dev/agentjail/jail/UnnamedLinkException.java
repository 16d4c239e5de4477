package dev.agentjail.jail;

/**
 * A bind of the policy leads through a symbolic link that a jailed agent could have made to a path the policy does not
 * name (see {@link BindSources}); the message names the bind, the link and where it leads.
 */
public final class UnnamedLinkException extends Exception {
    private static final long serialVersionUID = 1L;

    public UnnamedLinkException(String message) {
        super(message);
    }
}
