package dev.agentjail.policy;

import java.util.Objects;

/**
 * A policy decision with its reason: the verdict, a stable machine-readable reason code (see
 * {@link Reasons}) and the rule that produced it ({@code "-"} when no rule matched).
 */
public record Decision(Verdict verdict, String reason, String rule) {
    public Decision {
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(rule, "rule");
    }

    public static Decision allow(String reason, String rule) {
        return new Decision(Verdict.ALLOW, reason, rule);
    }

    public static Decision deny(String reason, String rule) {
        return new Decision(Verdict.DENY, reason, rule);
    }

    public boolean allowed() {
        return verdict == Verdict.ALLOW;
    }
}
