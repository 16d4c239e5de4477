package dev.agentjail.policy;

/**
 * The machine policy cannot be used because of the host, not because of what it says: one of its files, or a
 * directory on the way to one, could have been written by someone other than root, or cannot be read. agentjail then
 * refuses to start (exit code 3). The message is one line, {@code FILE: problem}.
 */
public final class MachinePolicyException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String file;

    MachinePolicyException(String file, String problem) {
        super(file + ": " + problem);
        this.file = file;
    }

    /** The machine policy file or directory the problem was found with, as agentjail looked for it. */
    public String file() {
        return file;
    }
}
