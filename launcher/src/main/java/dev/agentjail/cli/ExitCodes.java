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
    /**
     * Bad usage or a malformed policy: nothing was started. Also an input file that does not exist or cannot be opened,
     * whichever command reads it ({@link CliException#unreadable}).
     */
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

    /** One row of the table: the code (or range) and what it means, as the README and the man pages say it. */
    record Row(String codes, String meaning) {}

    /**
     * The exit-code table of every command, in the words the README's table and each man page's EXIT STATUS use
     * (CliDocsTest holds the README to it; the README adds only code formatting).
     */
    static final java.util.List<Row> TABLE = java.util.List.of(
            new Row("0", "success (for run: the agent's own exit code is passed through)"),
            new Row(
                    "1",
                    "failure at run time: an output file cannot be written, an input fails while it is read, a"
                            + " listener cannot bind; log verify: a log is not intact; --strict: a bad line in a log"),
            new Row(
                    "2",
                    "bad usage, nothing was done: an unknown option or a bad value; an input file that does not exist"
                            + " or cannot be opened (the same for every command: a policy, an audit log to read, a"
                            + " key); a malformed policy; a project directory that is no project's (the home"
                            + " directory, /, /tmp, a system directory); run: another session running on the project,"
                            + " inside it or around it"),
            new Row(
                    "3",
                    "the environment lacks something required (a JDK, bwrap, an audit log run or proxy can write, a"
                            + " usable CA, a credential's value), or a machine policy file that someone other than root"
                            + " could write (see docs/policy.md)"),
            new Row(
                    "120-123",
                    "run: agentjail-init could not set up the jail's proxy socket or limits (see docs/jail.md)"),
            new Row("124", "run: the session timed out"),
            new Row("125", "run: bwrap could not set up the jail"),
            new Row(
                    "127",
                    "run: the agent a preset runs is not on the PATH (nothing was started), or the command is not"
                            + " found in the jail"));

    private ExitCodes() {}
}
