package dev.agentjail.proxy.http;

import io.netty.handler.codec.http.HttpResponseStatus;

/** Thrown inside the decoder when a request must be refused; carries the status and reason code. */
final class RequestRejected extends Exception {
    private static final long serialVersionUID = 1L;

    final transient HttpResponseStatus status;
    final String reason;

    RequestRejected(HttpResponseStatus status, String reason, String detail) {
        super(detail, null, false, false);
        this.status = status;
        this.reason = reason;
    }

    static RequestRejected bad(String reason, String detail) {
        return new RequestRejected(HttpResponseStatus.BAD_REQUEST, reason, detail);
    }
}
