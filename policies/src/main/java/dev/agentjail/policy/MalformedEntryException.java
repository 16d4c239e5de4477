package dev.agentjail.policy;

/**
 * A policy entry (path, glob, name, duration, size) that the strict parser refuses; the message is
 * the reason, without the entry, so the caller can add the file, line and key.
 */
public final class MalformedEntryException extends Exception {
    private static final long serialVersionUID = 1L;

    public MalformedEntryException(String message) {
        super(message);
    }
}
