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

    private ProxyReasons() {}
}
