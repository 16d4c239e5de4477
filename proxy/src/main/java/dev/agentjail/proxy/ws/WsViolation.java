package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.ProxyReasons;
import io.netty.handler.codec.DecoderException;

/**
 * Why a WebSocket connection is failed: the close {@code code} the side at fault gets (RFC 6455 section 7.4), the
 * audit {@code reason} code, which is also the close frame's reason text, and a {@code detail} for a person.
 */
public final class WsViolation extends DecoderException {
    /** A secret the policy does not let through. */
    public static final int POLICY = 1008;

    public static final int PROTOCOL = 1002;
    public static final int INVALID_DATA = 1007;
    public static final int TOO_BIG = 1009;

    private final int code;
    private final String reason;
    private final boolean denied;

    public WsViolation(int code, String reason, String detail, boolean denied) {
        super(detail);
        this.code = code;
        this.reason = reason;
        this.denied = denied;
    }

    static WsViolation protocol(String detail) {
        return new WsViolation(PROTOCOL, ProxyReasons.WEBSOCKET_PROTOCOL_ERROR, detail, false);
    }

    /** A verdict on input, not a bug: no stack trace to fill. */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }

    public int code() {
        return code;
    }

    public String reason() {
        return reason;
    }

    public String detail() {
        return getMessage();
    }

    /** A policy decision (deny) rather than broken input (error). */
    public boolean denied() {
        return denied;
    }
}
