package dev.agentjail.policy;

/** A host, port or authority that the strict parser refuses; never guessed at, never resolved. */
public final class MalformedTargetException extends Exception {
    private static final long serialVersionUID = 1L;

    public MalformedTargetException(String message) {
        super(message);
    }
}
