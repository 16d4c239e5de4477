package dev.agentjail.proxy.redact;

/**
 * Receives the bytes a {@link BodyRedactor} releases; the array is reused, so copy what you keep before
 * returning.
 */
@FunctionalInterface
public interface ByteSink {
    /** A sink that drops everything: for scan-only passes where only the {@link Findings} matter. */
    ByteSink DISCARD = (bytes, offset, length) -> {};

    void write(byte[] bytes, int offset, int length);
}
