package dev.agentjail.policy;

/** Stable reason codes for policy decisions; they appear in the 403 reason header and the audit log. */
public final class Reasons {
    /** Allowed by an allow entry. */
    public static final String ALLOWED = "allowed";
    /** Matched a deny entry (deny wins over allow). */
    public static final String DENIED_BY_RULE = "denied-by-rule";
    /** No allow entry matched the host and port. */
    public static final String NOT_ALLOWED = "not-in-allowlist";
    /** The policy's allow list is empty: no network at all. */
    public static final String NO_NETWORK = "no-network";
    /**
     * Report mode ({@code network.mode: report}): let through although no allow entry covers it; the
     * rule field then says why it would have been denied ({@link #NOT_ALLOWED} or {@link #NO_NETWORK}).
     */
    public static final String WOULD_DENY = "would-deny";

    private Reasons() {}
}
