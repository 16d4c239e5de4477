package dev.agentjail.policy;

import java.util.Objects;

/**
 * One entry of a project policy that reaches outside the jail and the project (a host secret, a host path, a
 * device), which agentjail only honours once the user trusts the project policy: where it is written and what it
 * asks for, in words.
 */
public record ProjectRequest(String file, int line, String key, String asks) {
    public ProjectRequest {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(asks, "asks");
    }

    /** {@code FILE:LINE}, as policy errors name places. */
    public String where() {
        return file + ":" + line;
    }

    /** {@code FILE:LINE: KEY: what it asks for}. */
    @Override
    public String toString() {
        return where() + ": " + key + ": " + asks;
    }
}
