package dev.agentjail.proxy;

/**
 * Reason codes the proxy itself produces (policy reasons live in {@code dev.agentjail.policy.Reasons}
 * and SSRF reasons in {@code AddressClass}). They appear in the {@link #HEADER} response header and in
 * the audit record's {@code reason}; docs/audit-log.md lists them all.
 */
public final class ProxyReasons {
    /** Response header carrying the machine-readable reason of a refusal. */
    public static final String HEADER = "X-Agentjail-Reason";
    /** Response header naming the rule that decided, when one did. */
    public static final String RULE_HEADER = "X-Agentjail-Rule";

    public static final String BAD_TARGET = "bad-target";
    public static final String BAD_HOST_HEADER = "bad-host-header";
    public static final String DNS_FAILURE = "dns-failure";
    public static final String UPSTREAM_CONNECT_FAILED = "upstream-connect-failed";
    public static final String UPSTREAM_TIMEOUT = "upstream-timeout";
    public static final String UPSTREAM_PROTOCOL_ERROR = "upstream-protocol-error";
    public static final String UPSTREAM_CLOSED = "upstream-closed";
    public static final String CLIENT_CLOSED = "client-closed";
    public static final String HEADER_TIMEOUT = "header-timeout";
    public static final String BODY_TIMEOUT = "body-timeout";
    public static final String AUDIT_UNAVAILABLE = "audit-unavailable";
    public static final String EXPECTATION_FAILED = "expectation-failed";
    /** A request inside an intercepted tunnel named another origin than the tunnel's (domain fronting). */
    public static final String TUNNEL_HOST_MISMATCH = "tunnel-host-mismatch";
    /** The TLS ClientHello named another server (SNI) than the CONNECT did. */
    public static final String SNI_MISMATCH = "sni-mismatch";

    /**
     * A relayed tunnel's TLS went where the proxy cannot follow it far enough to know every server name asked for: a
     * record or handshake message that does not parse or comes out of order, or a TLS 1.2 renegotiation (whose
     * ClientHello is encrypted).
     */
    public static final String TUNNEL_TLS_UNREADABLE = "tunnel-tls-unreadable";

    /** The request's host name carries a secret: it is never resolved, and its record shows it redacted. */
    public static final String SECRET_IN_HOST = "secret-in-host";

    /** A credential host answered a request carrying an injected credential with a compressed body: not scrubbable. */
    public static final String CREDENTIAL_RESPONSE_ENCODED = "credential-response-encoded";
    /** The client's TLS handshake with the proxy failed (not TLS, a pinned certificate, a protocol error). */
    public static final String CLIENT_TLS_FAILED = "client-tls-failed";
    /** The upstream's certificate did not verify, or its TLS handshake failed: nothing was delivered. */
    public static final String UPSTREAM_TLS_FAILED = "upstream-tls-failed";
    /** A secret was found and the policy's redaction action is {@code block}, or the payload can't be rewritten. */
    public static final String SECRET_BLOCKED = "secret-blocked";
    /** A body in a content coding the redactor cannot inspect (br, zstd, …) or past the inspection caps. */
    public static final String UNINSPECTABLE_BODY = "uninspectable-body";

    /** The target (a pinned name, an allowed IP literal) would reach one of the proxy's own listeners. */
    public static final String SELF_CONNECTION = "self-connection";

    /**
     * WebSocket: a binary or control message carrying a secret, or any message with one under {@code redaction.action:
     * block}; the client gets close code 1008 with this reason.
     */
    public static final String WEBSOCKET_SECRET_BLOCKED = "websocket-secret-blocked";
    /** WebSocket: a frame RFC 6455 or RFC 7692 forbids (unmasked client frame, reserved bits, bad fragmentation). */
    public static final String WEBSOCKET_PROTOCOL_ERROR = "websocket-protocol-error";
    /** WebSocket: a text message or close reason that is not UTF-8 (close code 1007). */
    public static final String WEBSOCKET_INVALID_UTF8 = "websocket-invalid-utf8";
    /** WebSocket: a message larger than the proxy inspects, before or after inflating (close code 1009). */
    public static final String WEBSOCKET_MESSAGE_TOO_BIG = "websocket-message-too-big";
    /** The upstream's 101 chose an extension, parameter or subprotocol the forwarded offer did not hold, or a bad accept. */
    public static final String WEBSOCKET_HANDSHAKE_REFUSED = "websocket-handshake-refused";

    private ProxyReasons() {}
}
