package dev.agentjail.cli;

import dev.agentjail.policy.Reasons;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What audit records tell {@code policy suggest}: the requests refused for want of an allow entry, the other
 * refusals, and the addresses names resolved to. Hosts stay exactly as the log wrote them; {@link SuggestPlan} judges
 * them.
 */
final class SuggestLog {
    /** A host and port as the log wrote them, and the port an entry without a port stands for (443 or 80). */
    record Seen(String host, int port, int defaultPort) {
        Seen {
            Objects.requireNonNull(host, "host");
        }

        /** The host as a user reads it: IPv6 in brackets, with the port unless it is the default. */
        String display() {
            String shown = host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
            return port == 0 || port == defaultPort ? shown : shown + ":" + port;
        }
    }

    /** How many requests asked for a host, and when the last one did. */
    record Count(int requests, Instant last) {
        Count plus(Count other) {
            return new Count(requests + other.requests, last.isAfter(other.last) ? last : other.last);
        }
    }

    private final String session;
    private final Map<Seen, Count> wanted = new LinkedHashMap<>();
    private final Map<Seen, String> refused = new LinkedHashMap<>();
    private final Map<String, Set<String>> resolved = new LinkedHashMap<>();
    private int requests;
    private int sessionRecords;

    /** Reads only the records of {@code session}, or every record when it is {@code null}. */
    SuggestLog(String session) {
        this.session = session;
    }

    void add(LogRecord r) {
        if (session != null && !session.equals(r.sessionId())) {
            return;
        }
        sessionRecords++;
        if (!r.isRequest() || r.host() == null || r.host().isEmpty()) {
            return;
        }
        requests++;
        boolean tls = "CONNECT".equals(r.method()) || "https".equals(r.scheme());
        Seen seen = new Seen(r.host(), r.port(), tls ? 443 : 80);
        if (r.resolvedIp() != null && !r.resolvedIp().isEmpty()) {
            resolved.computeIfAbsent(r.host(), h -> new LinkedHashSet<>()).add(r.resolvedIp());
        }
        boolean notListed =
                r.isDenied() && (Reasons.NOT_ALLOWED.equals(r.reason()) || Reasons.NO_NETWORK.equals(r.reason()));
        if (notListed || Reasons.WOULD_DENY.equals(r.reason())) {
            wanted.merge(seen, new Count(1, r.ts()), Count::plus);
        } else if (r.isDenied()) {
            refused.putIfAbsent(seen, r.reason());
        }
    }

    /** The request records read (of the session, with {@code --session}). */
    int requests() {
        return requests;
    }

    /** Every record of the session, of any kind; with {@code --session}, 0 means the logs hold no such session. */
    int sessionRecords() {
        return sessionRecords;
    }

    /** The hosts refused because no allow entry covered them (or, in report mode, that would have been). */
    Map<Seen, Count> wanted() {
        return wanted;
    }

    /** The hosts refused for another reason (a deny entry, the SSRF guard), with the first reason seen. */
    Map<Seen, String> refused() {
        return refused;
    }

    /** For each host as the log wrote it, the addresses ({@code resolved_ip}) its requests were dialled at. */
    Map<String, Set<String>> resolved() {
        return resolved;
    }
}
