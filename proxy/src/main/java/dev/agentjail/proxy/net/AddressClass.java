package dev.agentjail.proxy.net;

/**
 * The SSRF category of a resolved address, each with a stable reason code for the 403 header and the audit record.
 *
 * <p>Reason codes are part of the documented audit schema (docs/audit-log.md): never rename one, only add.
 */
public enum AddressClass {
    /** Globally routable unicast: the only class the proxy may dial. */
    PUBLIC("public"),
    /** 127.0.0.0/8 and ::1. */
    LOOPBACK("ssrf-loopback"),
    /** RFC 1918: 10/8, 172.16/12, 192.168/16. */
    PRIVATE("ssrf-private"),
    /** 169.254/16 (which holds the AWS/GCP/OCI metadata address 169.254.169.254) and fe80::/10. */
    LINK_LOCAL("ssrf-link-local"),
    /** Cloud metadata endpoints that a range filter would miss or misname: 168.63.129.16, fd00:ec2::254. */
    METADATA("ssrf-metadata"),
    /** Carrier-grade NAT 100.64/10 (Alibaba's metadata 100.100.100.200 lives here). */
    CGNAT("ssrf-cgnat"),
    /** IPv6 unique local addresses fc00::/7. */
    UNIQUE_LOCAL("ssrf-unique-local"),
    /** Deprecated IPv6 site-local fec0::/10, still routed by some networks. */
    SITE_LOCAL("ssrf-site-local"),
    /** 224/4 and ff00::/8. */
    MULTICAST("ssrf-multicast"),
    /** 0.0.0.0/8 and ::, which Linux connects to the local host. */
    UNSPECIFIED("ssrf-unspecified"),
    /** 255.255.255.255. */
    BROADCAST("ssrf-broadcast"),
    /** Everything else that is not global unicast: documentation, benchmarking, protocol assignments, 240/4, … */
    RESERVED("ssrf-reserved");

    private final String reason;

    AddressClass(String reason) {
        this.reason = reason;
    }

    /** The stable, machine-readable reason code, e.g. {@code ssrf-loopback}. */
    public String reason() {
        return reason;
    }

    /** Whether the proxy may open a connection to an address of this class. */
    public boolean dialable() {
        return this == PUBLIC;
    }
}
