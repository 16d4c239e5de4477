package dev.agentjail.jail;

/**
 * What agentjail-init asks the seccomp supervisor to be told of (docs/jail.md "Exec and file audit"): the programs the
 * jail starts, the changes to its file tree, both, or nothing.
 */
public enum AuditScope {
    NONE("none"),
    EXEC("exec"),
    FILES("files"),
    EXEC_AND_FILES("exec,files");

    private final String initArgument;

    AuditScope(String initArgument) {
        this.initArgument = initArgument;
    }

    public static AuditScope of(boolean exec, boolean files) {
        if (exec) {
            return files ? EXEC_AND_FILES : EXEC;
        }
        return files ? FILES : NONE;
    }

    public boolean exec() {
        return this == EXEC || this == EXEC_AND_FILES;
    }

    public boolean files() {
        return this == FILES || this == EXEC_AND_FILES;
    }

    /** agentjail-init's {@code --audit} value. */
    public String initArgument() {
        return initArgument;
    }
}
