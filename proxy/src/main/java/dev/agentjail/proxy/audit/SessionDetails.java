package dev.agentjail.proxy.audit;

import java.util.List;

/**
 * What a session-start or session-end record adds: the policy's hash and source, the command, the binds
 * and the names (never the values) of the environment variables the jail received; at the end, the
 * agent's exit code and the session's request and denial counts; at both, how each resource limit is enforced
 * ({@code limits}), and at the end the limits the session ran into ({@code limitHits}: an OOM kill and its
 * process). Null components are omitted.
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
        List<String> surfaces,
        List<String> limits,
        List<String> limitHits,
        Long programs,
        Long filesChanged) {
    public SessionDetails {
        limits = limits == null ? null : List.copyOf(limits);
        limitHits = limitHits == null || limitHits.isEmpty() ? null : List.copyOf(limitHits);
        command = command == null ? null : List.copyOf(command);
        surfaces = surfaces == null ? null : List.copyOf(surfaces);
        binds = binds == null ? null : List.copyOf(binds);
        envNames = envNames == null ? null : List.copyOf(envNames);
    }

    public static SessionDetails start(
            String policySha256, String policySource, List<String> command, List<String> binds, List<String> envNames) {
        return new SessionDetails(
                policySha256, policySource, command, binds, envNames, null, null, null, null, null, null, null, null);
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
                surfaces == null || surfaces.isEmpty() ? null : surfaces,
                null,
                null,
                null,
                null);
    }

    /**
     * The same details with how each limit is enforced (one line each, like {@code memory 512m: cgroup v2 DIR
     * (memory.max, memory.swap.max=0)}) and the limits hit; null or empty hits: none.
     */
    public SessionDetails withLimits(List<String> newLimits, List<String> newLimitHits) {
        return new SessionDetails(
                policySha256,
                policySource,
                command,
                binds,
                envNames,
                exitCode,
                requests,
                denials,
                surfaces,
                newLimits,
                newLimitHits,
                programs,
                filesChanged);
    }

    /**
     * The same details with the session's exec events ({@code programs}) and distinct changed paths ({@code
     * filesChanged}); null when that auditing was off.
     */
    public SessionDetails withActivity(Long newPrograms, Long newFilesChanged) {
        return new SessionDetails(
                policySha256,
                policySource,
                command,
                binds,
                envNames,
                exitCode,
                requests,
                denials,
                surfaces,
                limits,
                limitHits,
                newPrograms,
                newFilesChanged);
    }
}
