package dev.agentjail.cli;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.Decision;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.HostPattern;
import dev.agentjail.policy.MalformedTargetException;
import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.policy.Reasons;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.net.AddressClass;
import dev.agentjail.proxy.net.AddressClassifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decides, for each host an audit log shows refused, whether {@code policy suggest} proposes an allow entry for it or
 * skips it, and why: never an address the SSRF guard refuses (in any spelling the parser reads as one), never an IP
 * address at all (names are proposed; docs/policy.md, Learning mode), never a name that is always local or
 * agentjail's own, never a name that resolved to an address the guard refuses, nothing the current policy already
 * decides otherwise.
 */
final class SuggestPlan {
    /** Names that are the local host wherever they resolve: RFC 6761, and what the jail's /etc/hosts maps to ::1. */
    private static final Set<String> LOCAL_NAMES =
            Set.of("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback");

    /** agentjail's own names ({@code NAME.mcp.agentjail.internal}, see HostEndpoints) are routed by the proxy. */
    private static final String OWN_DOMAIN = "agentjail.internal";

    /** A proposed entry, with how many requests asked for it and the targets they asked for. */
    record Proposal(String entry, SuggestLog.Count count, Set<Probe> probes) {
        Proposal {
            probes = Set.copyOf(probes);
        }
    }

    /** A target a refused request asked for, and the port an entry without one stood for there. */
    record Probe(Target target, int defaultPort) {}

    /** A host as the log wrote it (escape it before printing) and why no entry is proposed for it. */
    record Skip(String host, String reason) {}

    private final NetworkPolicy policy;
    private final Map<String, SuggestLog.Count> proposals = new TreeMap<>();
    private final Map<String, Set<Probe>> probes = new LinkedHashMap<>();
    private final Map<String, String> skips = new TreeMap<>();
    /** Canonical names to the addresses their requests were dialled at. */
    private final Map<String, Set<String>> addressesOf = new LinkedHashMap<>();
    /** Canonical addresses to the names that resolved to them. */
    private final Map<String, Set<String>> namesOf = new LinkedHashMap<>();
    /** Canonical names the SSRF guard refused, with its reason. */
    private final Map<String, String> ssrfRefused = new LinkedHashMap<>();

    private SuggestPlan(NetworkPolicy policy) {
        this.policy = policy;
    }

    /** Judges every host of {@code log} against the rules and the current {@code policy}. */
    static SuggestPlan of(SuggestLog log, NetworkPolicy policy) {
        SuggestPlan plan = new SuggestPlan(policy);
        log.resolved().forEach(plan::noteResolved);
        log.refused().forEach((seen, reason) -> {
            if (reason != null && reason.startsWith("ssrf-")) {
                canonical(seen)
                        .filter(t -> t.kind() == HostKind.DNS)
                        .ifPresent(t -> plan.ssrfRefused.putIfAbsent(t.host(), reason));
            }
        });
        log.wanted().forEach(plan::judge);
        log.refused().forEach((seen, reason) -> {
            if (!log.wanted().containsKey(seen)) {
                plan.skips.putIfAbsent(seen.display(), "refused: " + reason);
            }
        });
        return plan;
    }

    List<Proposal> proposals() {
        List<Proposal> out = new ArrayList<>();
        proposals.forEach((entry, count) -> out.add(new Proposal(entry, count, probes.get(entry))));
        return out;
    }

    List<Skip> skips() {
        List<Skip> out = new ArrayList<>();
        skips.forEach((host, reason) -> out.add(new Skip(host, reason)));
        return out;
    }

    private void noteResolved(String host, Set<String> addresses) {
        Optional<Target> name = canonical(new SuggestLog.Seen(host, 0, 443)).filter(t -> t.kind() == HostKind.DNS);
        if (name.isEmpty()) {
            return;
        }
        for (String address : addresses) {
            canonical(new SuggestLog.Seen(address, 0, 443))
                    .filter(Target::isIpLiteral)
                    .ifPresent(ip -> {
                        addressesOf
                                .computeIfAbsent(name.get().host(), h -> new LinkedHashSet<>())
                                .add(ip.host());
                        namesOf.computeIfAbsent(ip.host(), a -> new LinkedHashSet<>())
                                .add(name.get().host());
                    });
        }
    }

    private void judge(SuggestLog.Seen seen, SuggestLog.Count count) {
        String display = seen.display();
        Target target;
        try {
            target = parse(seen);
        } catch (MalformedTargetException e) {
            skips.putIfAbsent(display, "not a valid host: " + e.getMessage());
            return;
        }
        Optional<String> skip = target.isIpLiteral() ? whyNotAddress(target) : whyNotName(target);
        String entry = entry(target, seen.defaultPort());
        if (skip.isEmpty()) {
            skip = whyNotNow(entry, target, seen.defaultPort());
        }
        if (skip.isPresent()) {
            skips.putIfAbsent(display, skip.get());
        } else {
            proposals.merge(entry, count, SuggestLog.Count::plus);
            probes.computeIfAbsent(entry, e -> new LinkedHashSet<>()).add(new Probe(target, seen.defaultPort()));
        }
    }

    /** Every IP address is skipped: those the SSRF guard refuses above all, public ones because names are better. */
    private Optional<String> whyNotAddress(Target target) {
        AddressClass addressClass = AddressClassifier.classify(Authorities.literalAddress(target));
        if (!addressClass.dialable()) {
            return Optional.of(addressClass.reason() + " address " + target.uriHost()
                    + ": the SSRF guard refuses it, an allow entry would let it through");
        }
        Set<String> names = namesOf.get(target.host());
        if (names != null) {
            return Optional.of("the address of " + String.join(", ", names) + "; the name is what to allow");
        }
        return Optional.of(
                "a public IP address: suggest proposes host names only; add an IP entry by hand if you" + " mean it");
    }

    private Optional<String> whyNotName(Target target) {
        String host = target.host();
        if (LOCAL_NAMES.contains(host) || host.endsWith(".localhost")) {
            return Optional.of("always the local host");
        }
        if (host.equals(OWN_DOMAIN) || host.endsWith("." + OWN_DOMAIN)) {
            return Optional.of("agentjail's own name (" + OWN_DOMAIN + ")");
        }
        for (String address : addressesOf.getOrDefault(host, Set.of())) {
            Optional<Target> ip = canonical(new SuggestLog.Seen(address, 0, 443));
            AddressClass addressClass = ip.map(t -> AddressClassifier.classify(Authorities.literalAddress(t)))
                    .orElseThrow();
            if (!addressClass.dialable()) {
                return Optional.of("resolved to the " + addressClass.reason() + " address "
                        + ip.get().uriHost() + ", which the SSRF guard refuses");
            }
        }
        String ssrf = ssrfRefused.get(host);
        return ssrf == null ? Optional.empty() : Optional.of("refused: " + ssrf);
    }

    /** A proposal must be an entry the loader takes and that the current policy leaves to the allow list. */
    private Optional<String> whyNotNow(String entry, Target target, int defaultPort) {
        try {
            HostPattern.parse(entry);
        } catch (MalformedTargetException e) {
            return Optional.of("not an allow entry: " + e.getMessage());
        }
        Decision decision = policy.decide(target, defaultPort);
        if (decision.allowed() && !Reasons.WOULD_DENY.equals(decision.reason())) {
            return Optional.of("allowed now: " + decision.rule());
        }
        if (!decision.allowed()
                && !Reasons.NOT_ALLOWED.equals(decision.reason())
                && !Reasons.NO_NETWORK.equals(decision.reason())) {
            return Optional.of("refused now: " + decision.reason() + " " + decision.rule());
        }
        return Optional.empty();
    }

    /**
     * The entry for a target: its host, with the port unless an entry without one covers it ({@code network.ports},
     * else the scheme's default port).
     */
    private String entry(Target target, int defaultPort) {
        boolean implied = policy.ports().isEmpty()
                ? target.port() == defaultPort
                : policy.ports().contains(target.port());
        return implied ? target.uriHost() : target.authority();
    }

    private static Optional<Target> canonical(SuggestLog.Seen seen) {
        try {
            return Optional.of(parse(seen));
        } catch (MalformedTargetException e) {
            return Optional.empty();
        }
    }

    /** The canonical target of a logged host; an IPv6 host is logged without brackets. */
    private static Target parse(SuggestLog.Seen seen) throws MalformedTargetException {
        String host = seen.host();
        String authority = host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
        Target parsed = Authorities.parseAuthority(authority, seen.defaultPort());
        int port = seen.port() == 0 ? seen.defaultPort() : seen.port();
        return new Target(parsed.host(), parsed.kind(), port);
    }
}
