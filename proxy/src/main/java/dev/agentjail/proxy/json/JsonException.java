package dev.agentjail.proxy.json;

/** Input that is not strict JSON; {@link #truncated()} when it only ended too early. */
public final class JsonException extends Exception {
    private final boolean truncated;

    JsonException(String message, boolean truncated) {
        super(message, null, false, false);
        this.truncated = truncated;
    }

    /** Whether the input ended inside a value (more bytes could have made it valid). */
    public boolean truncated() {
        return truncated;
    }
}
