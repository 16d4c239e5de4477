package dev.agentjail.policy;

import org.yaml.snakeyaml.nodes.Tag;

/** Writing values into policy YAML, for commands that propose or generate policy text. */
public final class PolicyYaml {
    private PolicyYaml() {}

    /** {@code value} as a YAML string scalar: plain when that reads back as the same string, else double-quoted. */
    public static String scalar(String value) {
        return PolicyRenderer.scalar(value, Tag.STR);
    }
}
