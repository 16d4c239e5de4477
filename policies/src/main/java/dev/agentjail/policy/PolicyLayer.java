package dev.agentjail.policy;

/**
 * Where a policy document sits in the stack, from the most authoritative layer to the least. Files
 * are merged in this order, so a later layer's scalar overrides an earlier one's; but a setting an
 * earlier layer marks {@code locked} cannot be changed by a later layer, and nothing a later layer
 * writes can lift an earlier layer's deny.
 */
public enum PolicyLayer {
    /** agentjail's own defaults (a built-in document); it locks nothing. */
    DEFAULTS("built-in defaults"),
    /**
     * The machine's policy: {@code /etc/agentjail/policy.yaml} and {@code /etc/agentjail/policy.d/*.yaml}, read only
     * from files that nobody but root can have written. No environment variable or option turns it off.
     */
    MACHINE("machine policy"),
    /** Team defaults: {@code AGENTJAIL_TEAM_POLICY} or the user config's {@code team_policy}. */
    TEAM("team policy"),
    /** The user's own defaults: {@code $XDG_CONFIG_HOME/agentjail/policy.yaml}. */
    USER("user policy"),
    /** The project's {@code .agentjail.yaml}, or the preset {@code agentjail run AGENT} picks. */
    PROJECT("project policy"),
    /** {@code --policy FILE} and command-line options. */
    OVERRIDE("command line");

    private final String description;

    PolicyLayer(String description) {
        this.description = description;
    }

    /** How messages name the layer, e.g. "team policy". */
    public String description() {
        return description;
    }
}
