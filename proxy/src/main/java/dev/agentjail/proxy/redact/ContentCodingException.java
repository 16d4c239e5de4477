package dev.agentjail.proxy.redact;

/** A body whose {@code Content-Encoding} cannot be inspected: the caller refuses it, never passes it on. */
public final class ContentCodingException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why the body was refused; {@link #code()} is the stable reason code for records and responses. */
    public enum Reason {
        UNSUPPORTED_CODING("unsupported-content-encoding"),
        DECODED_TOO_LARGE("decoded-body-too-large"),
        RATIO_EXCEEDED("compression-ratio-exceeded"),
        MALFORMED("malformed-content-encoding"),
        /** Bytes after the end of the (first) gzip member or deflate stream: a second reading of the body. */
        TRAILING_DATA("content-encoding-trailing-data");

        private final String code;

        Reason(String code) {
            this.code = code;
        }

        public String code() {
            return code;
        }
    }

    private final Reason reason;

    public ContentCodingException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public ContentCodingException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
