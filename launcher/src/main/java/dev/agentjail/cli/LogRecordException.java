package dev.agentjail.cli;

/** A line of an audit log that is not strict JSON, or not a v1 record; the message says what and where in the line. */
final class LogRecordException extends Exception {
    private static final long serialVersionUID = 1L;

    LogRecordException(String message) {
        super(message);
    }
}
