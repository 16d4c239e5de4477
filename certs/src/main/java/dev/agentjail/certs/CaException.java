package dev.agentjail.certs;

/** The local CA cannot be created, loaded or used; the message names the file and, where there is one, the fix. */
public final class CaException extends Exception {
    private static final long serialVersionUID = 1L;

    public CaException(String message) {
        super(message);
    }

    public CaException(String message, Throwable cause) {
        super(message, cause);
    }
}
