package dev.agentjail.cli;

/**
 * The exit codes of the {@code agentjail} command, documented once here and in the README. {@code
 * run} returns the agent's own exit code when the agent ran; these codes are what agentjail itself
 * returns.
 */
public final class ExitCodes {
    public static final int OK = 0;
    /** Something went wrong at run time (I/O, a listener could not bind). */
    public static final int FAILURE = 1;
    /** Bad usage or a malformed policy: nothing was started. */
    public static final int USAGE = 2;
    /**
     * A required part of the host is missing or unusable (no JDK, no bwrap, no audit log, a machine policy file in
     * /etc/agentjail that someone other than root could have written or that cannot be read).
     */
    public static final int ENVIRONMENT = 3;
    /**
     * {@code run}: bwrap could not set up the jail (its own message is printed above). agentjail-init's
     * setup failures inside the jail keep their codes 120–123 (see docs/jail.md).
     */
    public static final int JAIL_SETUP = 125;
    /**
     * {@code run}: the agent a preset runs is not on the host's PATH (as a shell says for a command it cannot find);
     * nothing was started.
     */
    public static final int NOT_FOUND = 127;
    /** The session timed out (as timeout(1) does). */
    public static final int TIMEOUT = 124;

    private ExitCodes() {}
}
