package dev.agentjail.proxy.http;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.Objects;

/**
 * What the strict decoder emits instead of a request it refuses: the status to answer, a stable
 * reason code, a short human description and a hash of the first bytes (never the bytes).
 */
public record MalformedRequest(HttpResponseStatus status, String reason, String detail, String firstBytesSha256) {
    public MalformedRequest {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
    }
}
