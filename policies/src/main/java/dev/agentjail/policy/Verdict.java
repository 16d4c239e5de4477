package dev.agentjail.policy;

/** The outcome of a policy decision. */
public enum Verdict {
    ALLOW,
    DENY
}
