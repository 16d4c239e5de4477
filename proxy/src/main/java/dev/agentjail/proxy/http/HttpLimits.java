package dev.agentjail.proxy.http;

/** Size limits for a request head; anything larger is refused with 414 or 431, never truncated. */
public record HttpLimits(int maxRequestLine, int maxHeaderLine, int maxHeadBytes, int maxHeaders) {
    public HttpLimits {
        if (maxRequestLine < 64 || maxHeaderLine < 64 || maxHeadBytes < maxHeaderLine || maxHeaders < 1) {
            throw new IllegalArgumentException("limits too small");
        }
    }

    public static HttpLimits defaults() {
        return new HttpLimits(16 * 1024, 16 * 1024, 64 * 1024, 128);
    }
}
