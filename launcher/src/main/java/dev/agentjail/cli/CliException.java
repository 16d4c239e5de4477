package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.file.Path;

/** A failure with a message for the user and the exit code it maps to. */
public final class CliException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int exitCode;

    public CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /**
     * An input the user named (or its default) that cannot be opened: a missing file is the same exit code for every
     * command ({@link ExitCodes#USAGE}, nothing was done), with the OS reason.
     */
    static CliException unreadable(Path file, IOException e) {
        String why = IoErrors.describe(file, e);
        boolean named = !(e instanceof java.nio.file.FileSystemException) && why.contains(file.toString());
        return new CliException(ExitCodes.USAGE, named ? why : "cannot read " + file + ": " + why, e);
    }

    public int exitCode() {
        return exitCode;
    }
}
