package dev.agentjail.proxy.audit;

/**
 * The WebSocket side of a relay's {@code tunnel-close} record: how many messages (data and control, each counted once,
 * however it was fragmented) went from the client to the upstream ({@code messagesOut}) and back ({@code messagesIn}).
 * Never their content.
 */
public record WebSocketDetails(long messagesOut, long messagesIn) {
    public WebSocketDetails {
        if (messagesOut < 0 || messagesIn < 0) {
            throw new IllegalArgumentException("message counts are not negative");
        }
    }
}
