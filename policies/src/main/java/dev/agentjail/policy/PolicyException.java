package dev.agentjail.policy;

/**
 * A policy that cannot be used. The message names the file, the line and the key:
 * {@code FILE:LINE: KEY: problem}.
 */
public final class PolicyException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String file;
    private final int line;
    private final String key;

    public PolicyException(String file, int line, String key, String problem) {
        super(file + ":" + line + ": " + key + ": " + problem);
        this.file = file;
        this.line = line;
        this.key = key;
    }

    public String file() {
        return file;
    }

    /** 1-based line, or 0 when the problem is not on a line (unreadable file). */
    public int line() {
        return line;
    }

    public String key() {
        return key;
    }
}
