package dev.agentjail.policy;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * One allow or deny entry: an exact host, {@code *.domain} (any depth of subdomain, never the apex)
 * or an IP literal, with an optional port. {@code text} is the entry as written in the policy.
 *
 * <p>{@code host} is canonical as in {@link Authorities}: for {@link Kind#WILDCARD} it is the
 * domain after {@code *.}, for {@link Kind#IP} the canonical address text without brackets. A
 * wildcard must cover at least two labels: {@code *.com} and {@code *.test} are refused as too
 * broad (a rule, not a public-suffix list, so {@code *.co.uk} is not caught). Entries must be ASCII;
 * internationalised names are written in punycode so that what the reader sees is what is matched.
 */
public record HostPattern(String text, Kind kind, String host, OptionalInt port) {
    /** The shape of a pattern. */
    public enum Kind {
        EXACT,
        WILDCARD,
        IP
    }

    public HostPattern {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(port, "port");
        if (port.isPresent() && (port.getAsInt() < 1 || port.getAsInt() > 65535)) {
            throw new IllegalArgumentException("port out of range: " + port.getAsInt());
        }
    }

    /** Parses and validates a policy entry; over-broad patterns are refused with a reason. */
    public static HostPattern parse(String text) throws MalformedTargetException {
        if (text == null || text.isEmpty()) {
            throw new MalformedTargetException("empty pattern");
        }
        if (!HostNames.isAscii(text)) {
            throw new MalformedTargetException(nonAsciiReason(text));
        }
        if (text.indexOf('*') < 0) {
            Authorities.HostPort parsed = Authorities.split(text);
            Kind kind = parsed.kind() == HostKind.DNS ? Kind.EXACT : Kind.IP;
            return new HostPattern(text, kind, parsed.host(), parsed.port());
        }
        if (text.equals("*") || text.startsWith("*:")) {
            throw new MalformedTargetException("'*' alone would match every host");
        }
        if (!text.startsWith("*.")) {
            throw new MalformedTargetException("'*' is only allowed as a leading '*.'");
        }
        String domain = text.substring(2);
        if (domain.indexOf('*') >= 0) {
            throw new MalformedTargetException("only one '*', as a leading '*.', is allowed");
        }
        if (domain.isEmpty() || domain.charAt(0) == ':') {
            throw new MalformedTargetException("'*.' needs a domain after it");
        }
        Authorities.HostPort parsed = Authorities.split(domain);
        if (parsed.kind() != HostKind.DNS) {
            throw new MalformedTargetException("a wildcard cannot cover an ip address");
        }
        if (parsed.host().indexOf('.') < 0) {
            throw new MalformedTargetException("wildcard over a single label is too broad");
        }
        return new HostPattern(text, Kind.WILDCARD, parsed.host(), parsed.port());
    }

    /** Whether this pattern matches the canonical target; a pattern without a port means {@code defaultPort}. */
    public boolean matches(Target target, int defaultPort) {
        if (target.port() != port.orElse(defaultPort)) {
            return false;
        }
        return switch (kind) {
            case IP -> target.isIpLiteral() && host.equals(target.host());
            case EXACT -> target.kind() == HostKind.DNS && host.equals(target.host());
            // Canonical targets have no empty labels, so a match always has at least one label before the dot.
            case WILDCARD -> target.kind() == HostKind.DNS && target.host().endsWith("." + host);
        };
    }

    /** Tells the author the punycode to write instead, when there is one. */
    private static String nonAsciiReason(String text) {
        try {
            Authorities.HostPort parsed = Authorities.split(text.startsWith("*.") ? text.substring(2) : text);
            String port = parsed.port().isPresent() ? ":" + parsed.port().getAsInt() : "";
            String ascii = (text.startsWith("*.") ? "*." : "") + parsed.host() + port;
            if (ascii.length() <= 64) {
                return "non-ascii host; write it in punycode: " + ascii;
            }
        } catch (MalformedTargetException e) {
            // Fall through to the generic reason: the name is not valid in any spelling.
        }
        return "non-ascii host; write it in punycode (xn--...)";
    }
}
