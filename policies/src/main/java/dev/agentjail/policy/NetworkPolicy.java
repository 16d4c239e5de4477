package dev.agentjail.policy;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Egress rules: allow and deny host patterns, pinned addresses ({@code resolve}, like curl's {@code
 * --resolve}) that count as explicitly allowed for the SSRF guard, and the hosts whose CONNECTs are
 * relayed without TLS interception ({@code tunnel}). A tunnel entry allows nothing by itself.
 *
 * <p>{@code ports}, when not empty, are the ports an allow or tunnel pattern without a port stands
 * for (instead of 443 for CONNECT and 80 for plain HTTP). A deny pattern without a port denies every
 * port. In {@link Mode#REPORT} mode a target that no allow entry covers is let through and recorded
 * as {@code would-deny}; deny entries still deny.
 */
public record NetworkPolicy(
        List<HostPattern> allow,
        List<HostPattern> deny,
        Map<String, List<InetAddress>> resolve,
        List<HostPattern> tunnel,
        Mode mode,
        List<Integer> ports,
        Map<String, Integer> resolvePorts) {
    /** {@code enforce} (the default) or {@code report} (learning: allow, but record what would be denied). */
    public enum Mode {
        ENFORCE,
        REPORT
    }

    public NetworkPolicy {
        allow = List.copyOf(allow);
        deny = List.copyOf(deny);
        resolve = resolve.entrySet().stream()
                .collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, e -> List.copyOf(e.getValue())));
        tunnel = List.copyOf(tunnel);
        Objects.requireNonNull(mode, "mode");
        ports = List.copyOf(ports);
        for (int port : ports) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port out of range: " + port);
            }
        }
        resolvePorts = Map.copyOf(resolvePorts);
        for (Map.Entry<String, Integer> e : resolvePorts.entrySet()) {
            if (!resolve.containsKey(e.getKey()) || e.getValue() < 1 || e.getValue() > 65535) {
                throw new IllegalArgumentException("resolve port for " + e.getKey() + ": " + e.getValue());
            }
        }
    }

    /** Rules whose pins dial the port asked for. */
    public NetworkPolicy(
            List<HostPattern> allow,
            List<HostPattern> deny,
            Map<String, List<InetAddress>> resolve,
            List<HostPattern> tunnel,
            Mode mode,
            List<Integer> ports) {
        this(allow, deny, resolve, tunnel, mode, ports, Map.of());
    }

    /**
     * Where a connection to {@code canonicalHost:port} goes when {@code resolve} pins it: the addresses of the entry
     * {@code host:port}, else of {@code host}, and the port to dial (the entry's {@code addr:port}, else {@code
     * port}).
     */
    public record Pin(List<InetAddress> addresses, int port) {}

    /** The pin for a connection to {@code canonicalHost:port}, if {@code resolve} has one. */
    public Optional<Pin> pin(String canonicalHost, int port) {
        for (String key : List.of(canonicalHost + ":" + port, canonicalHost)) {
            List<InetAddress> addresses = resolve.get(key);
            if (addresses != null) {
                return Optional.of(new Pin(addresses, resolvePorts.getOrDefault(key, port)));
            }
        }
        return Optional.empty();
    }

    /** Enforcing rules with the default ports. */
    public NetworkPolicy(
            List<HostPattern> allow,
            List<HostPattern> deny,
            Map<String, List<InetAddress>> resolve,
            List<HostPattern> tunnel) {
        this(allow, deny, resolve, tunnel, Mode.ENFORCE, List.of());
    }

    /** Rules without tunnelled hosts: every allowed CONNECT is intercepted. */
    public NetworkPolicy(List<HostPattern> allow, List<HostPattern> deny, Map<String, List<InetAddress>> resolve) {
        this(allow, deny, resolve, List.of());
    }

    public static NetworkPolicy none() {
        return new NetworkPolicy(List.of(), List.of(), Map.of(), List.of());
    }

    /** Whether a pattern covers the target: its own port, else one of {@code ports}, else {@code defaultPort}. */
    private boolean covers(HostPattern pattern, Target target, int defaultPort) {
        if (pattern.port().isPresent() || ports.isEmpty()) {
            return pattern.matches(target, defaultPort);
        }
        return ports.contains(target.port()) && pattern.matches(target, target.port());
    }

    /**
     * Decides on a canonical target. {@code defaultPort} is the port a pattern without a port stands
     * for: 443 for CONNECT, 80 for plain HTTP (unless {@code ports} says otherwise). Deny wins over
     * allow, and a deny entry without a port denies every port; an empty allow list means no network
     * (in report mode: everything is {@code would-deny}); IP literals match only IP entries.
     */
    public Decision decide(Target target, int defaultPort) {
        Objects.requireNonNull(target, "target");
        if (allow.isEmpty() && mode == Mode.ENFORCE) {
            return Decision.deny(Reasons.NO_NETWORK, "-");
        }
        for (int i = 0; i < deny.size(); i++) {
            HostPattern pattern = deny.get(i);
            if (pattern.matches(target, pattern.port().isPresent() ? defaultPort : target.port())) {
                return Decision.deny(Reasons.DENIED_BY_RULE, rule("deny", i, pattern));
            }
        }
        for (int i = 0; i < allow.size(); i++) {
            if (covers(allow.get(i), target, defaultPort)) {
                return Decision.allow(Reasons.ALLOWED, rule("allow", i, allow.get(i)));
            }
        }
        if (mode == Mode.REPORT) {
            return Decision.allow(Reasons.WOULD_DENY, allow.isEmpty() ? Reasons.NO_NETWORK : Reasons.NOT_ALLOWED);
        }
        return Decision.deny(Reasons.NOT_ALLOWED, "-");
    }

    /**
     * Whether a CONNECT to this canonical target is relayed untouched instead of intercepted: a
     * {@code tunnel} entry matches it. Says nothing about whether the target is allowed; ask {@link
     * #decide} first.
     */
    public boolean tunnelled(Target target, int defaultPort) {
        return tunnelRule(target, defaultPort).isPresent();
    }

    /** The first {@code tunnel} entry matching the target, as {@code network.tunnel[i]=pattern}, for the record. */
    public Optional<String> tunnelRule(Target target, int defaultPort) {
        Objects.requireNonNull(target, "target");
        for (int i = 0; i < tunnel.size(); i++) {
            if (covers(tunnel.get(i), target, defaultPort)) {
                return Optional.of(rule("tunnel", i, tunnel.get(i)));
            }
        }
        return Optional.empty();
    }

    /** Addresses pinned for a canonical host by {@code resolve}, or an empty list. */
    public List<InetAddress> pinned(String canonicalHost) {
        return resolve.getOrDefault(canonicalHost, List.of());
    }

    /**
     * Whether the policy explicitly allows dialing this address although the SSRF guard would refuse
     * it: the address is pinned for {@code canonicalHost} by {@code resolve}, or an allow entry names
     * this IP literal.
     *
     * <p>Addresses are compared as the endpoint that is dialled: an IPv4-mapped IPv6 address equals
     * its IPv4 address (Java dials both the same way). The port is not considered here; the decision
     * already checked it.
     */
    public boolean explicitlyAllows(String canonicalHost, InetAddress address) {
        return explicitlyAllows(canonicalHost, -1, address);
    }

    /** As above, for a connection to {@code port}: a pin of {@code host:port} counts too. */
    public boolean explicitlyAllows(String canonicalHost, int port, InetAddress address) {
        Objects.requireNonNull(canonicalHost, "canonicalHost");
        String wanted = endpoint(address.getAddress());
        List<InetAddress> pinned = new ArrayList<>(pinned(canonicalHost));
        if (port > 0) {
            pinned.addAll(resolve.getOrDefault(canonicalHost + ":" + port, List.of()));
        }
        for (InetAddress pinnedAddress : pinned) {
            if (endpoint(pinnedAddress.getAddress()).equals(wanted)) {
                return true;
            }
        }
        for (HostPattern pattern : allow) {
            if (pattern.kind() == HostPattern.Kind.IP
                    && endpoint(pattern.host()).equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    private static String rule(String list, int index, HostPattern pattern) {
        return "network." + list + "[" + index + "]=" + pattern.text();
    }

    /** Canonical text of the dialled endpoint: IPv4 as a dotted quad, also when IPv4-mapped. */
    private static String endpoint(byte[] bytes) {
        if (bytes.length == 4) {
            return Ipv4Literals.format(bytes, 0);
        }
        return Ipv6Literals.isIpv4Mapped(bytes) ? Ipv4Literals.format(bytes, 12) : Ipv6Literals.format(bytes);
    }

    private static String endpoint(String canonicalIp) {
        String mappedPrefix = "::ffff:";
        return canonicalIp.startsWith(mappedPrefix) && canonicalIp.indexOf('.') >= 0
                ? canonicalIp.substring(mappedPrefix.length())
                : canonicalIp;
    }
}
