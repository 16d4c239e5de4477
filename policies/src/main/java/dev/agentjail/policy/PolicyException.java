package dev.agentjail.policy;

/**
 * A policy that cannot be used. The message names the file, the line and the key:
 * {@code FILE:LINE: KEY: problem}; a YAML syntax error, which has no key, names the column instead:
 * {@code FILE:LINE:COLUMN: problem}.
 */
public final class PolicyException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String file;
    private final int line;
    private final int column;
    private final String key;

    public PolicyException(String file, int line, String key, String problem) {
        super(file + ":" + line + ": " + key + ": " + problem);
        this.file = file;
        this.line = line;
        this.column = 0;
        this.key = key;
    }

    /** A YAML syntax error, which has no key: {@code FILE:LINE:COLUMN: problem}. */
    PolicyException(String file, int line, int column, String problem) {
        super(file + ":" + line + ":" + column + ": " + problem);
        this.file = file;
        this.line = line;
        this.column = column;
        this.key = "-";
    }

    public String file() {
        return file;
    }

    /** 1-based line, or 0 when the problem is not on a line (unreadable file). */
    public int line() {
        return line;
    }

    /** 1-based column of a YAML syntax error, 0 for every other problem. */
    public int column() {
        return column;
    }

    public String key() {
        return key;
    }
}
