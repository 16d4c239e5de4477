package dev.agentjail.proxy.audit;

/** Thrown when a record cannot be made durable, so the caller must refuse the request it describes. */
public final class AuditUnavailableException extends Exception {

    public AuditUnavailableException(String message) {
        super(message);
    }

    public AuditUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
