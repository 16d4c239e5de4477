package dev.agentjail.proxy.audit;

import java.util.List;

/**
 * What a session-start or session-end record adds: the policy's hash and source, the command, the binds
 * and the names (never the values) of the environment variables the jail received; at the end, the
 * agent's exit code and the session's request and denial counts. Null components are omitted.
 */
public record SessionDetails(
        String policySha256,
        String policySource,
        List<String> command,
        List<String> binds,
        List<String> envNames,
        Integer exitCode,
        Long requests,
        Long denials,
        List<String> surfaces) {
    public SessionDetails {
        command = command == null ? null : List.copyOf(command);
        surfaces = surfaces == null ? null : List.copyOf(surfaces);
        binds = binds == null ? null : List.copyOf(binds);
        envNames = envNames == null ? null : List.copyOf(envNames);
    }

    public static SessionDetails start(
            String policySha256, String policySource, List<String> command, List<String> binds, List<String> envNames) {
        return new SessionDetails(policySha256, policySource, command, binds, envNames, null, null, null, null);
    }

    public static SessionDetails end(int exitCode, long requests, long denials) {
        return end(exitCode, requests, denials, null);
    }

    /**
     * The end of a session whose review found {@code surfaces}: one line each (kind, path, what became of it) for what
     * the agent wrote that the host would run; null or empty: nothing found.
     */
    public static SessionDetails end(int exitCode, long requests, long denials, List<String> surfaces) {
        return new SessionDetails(
                null,
                null,
                null,
                null,
                null,
                exitCode,
                requests,
                denials,
                surfaces == null || surfaces.isEmpty() ? null : surfaces);
    }
}
