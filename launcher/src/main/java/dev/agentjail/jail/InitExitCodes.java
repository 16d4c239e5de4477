package dev.agentjail.jail;

/**
 * Exit codes of agentjail-init, mirrored from launcher/src/main/c/agentjail-init.c and documented in
 * docs/jail.md. 120-123 are ours alone; 126 and 127 follow env(1) and the shell.
 */
public final class InitExitCodes {
    /** exec-with-fds could not open one of its descriptor files. */
    public static final int FD_FILE = 120;
    /** agentjail-init was called with malformed arguments (a launcher bug). */
    public static final int USAGE = 121;
    /** The loopback listener could not be created inside the jail or handed to the host proxy. */
    public static final int HANDOFF = 122;
    /** A resource limit could not be applied. */
    public static final int LIMITS = 123;
    /** The command exists but could not be executed. */
    public static final int NOT_EXECUTABLE = 126;
    /** The command was not found. */
    public static final int NOT_FOUND = 127;

    private InitExitCodes() {}
}
