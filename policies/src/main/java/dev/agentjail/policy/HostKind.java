package dev.agentjail.policy;

/** What kind of host a {@link Target} names. */
public enum HostKind {
    DNS,
    IPV4,
    IPV6
}
