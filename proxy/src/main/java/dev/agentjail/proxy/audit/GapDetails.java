package dev.agentjail.proxy.audit;

/**
 * What an {@code audit-gap} record says the log is missing: how many exec and file events went unrecorded ({@code
 * missed}, 0 when unknown) and which auditing stopped ({@code stopped}: the exec or file audit is off from here on).
 * The record's {@code reason} names the cause and {@code error} its detail.
 */
public record GapDetails(long missed, boolean stopped) {
    public GapDetails {
        if (missed < 0) {
            throw new IllegalArgumentException("missed is not negative");
        }
    }
}
