package dev.agentjail.policy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.OptionalInt;

/**
 * The one strict parser for hosts and authorities: canonicalises once (lower case, one trailing dot
 * stripped, punycode, canonical IP text, decimal port) and refuses anything it would have to guess
 * about.
 *
 * <p>Pinned behaviour: DNS labels are {@code [a-z0-9_-]}, 1..63 characters, not starting or ending
 * with '-', the name at most 253 characters; non-ASCII names go through IDNA2003 ToASCII and come
 * out as punycode. A host whose last label is numeric is an IPv4 address in any {@code inet_aton}
 * spelling ({@code 127.1}, {@code 0x7f000001}, {@code 0177.0.0.1}, {@code 2130706433}) and is
 * printed as a dotted quad; if it is not a valid address it is refused. IPv6 only in brackets,
 * printed per RFC 5952 with IPv4-mapped addresses as {@code ::ffff:a.b.c.d}; zone ids are refused.
 * Ports are 1..65535 in plain decimal without leading zeros. Userinfo, percent-encoding and the
 * characters {@code \ / ? #}, spaces and controls are refused anywhere. Error messages never echo
 * the input.
 */
public final class Authorities {
    /** Far above any valid authority (253-character name, port); longer input is refused unread. */
    static final int MAX_INPUT = 1024;

    private Authorities() {}

    /**
     * Parses a CONNECT request-target: {@code host:port} or {@code [v6]:port}; the port is required.
     */
    public static Target parseConnectTarget(String requestTarget) throws MalformedTargetException {
        HostPort parsed = split(requestTarget);
        if (parsed.port().isEmpty()) {
            throw new MalformedTargetException("port is required");
        }
        return new Target(parsed.host(), parsed.kind(), parsed.port().getAsInt());
    }

    /**
     * Parses an authority ({@code host}, {@code host:port}, {@code [v6]}, {@code [v6]:port}) as found
     * in an absolute-form URI or a Host header; no userinfo. {@code defaultPort} applies when no port
     * is given.
     */
    public static Target parseAuthority(String authority, int defaultPort) throws MalformedTargetException {
        if (defaultPort < 1 || defaultPort > 65535) {
            throw new IllegalArgumentException("default port out of range: " + defaultPort);
        }
        HostPort parsed = split(authority);
        return new Target(parsed.host(), parsed.kind(), parsed.port().orElse(defaultPort));
    }

    /**
     * The address an IP-literal target names, built from its bytes without any DNS lookup. Java
     * turns an IPv4-mapped IPv6 address into an {@code Inet4Address}.
     *
     * @throws IllegalArgumentException if the target is a DNS name
     */
    public static InetAddress literalAddress(Target target) {
        byte[] bytes = switch (target.kind()) {
            case IPV4 -> Ipv4Literals.parseDottedQuad(target.host());
            case IPV6 -> Ipv6Literals.parse(target.host());
            case DNS -> throw new IllegalArgumentException("not an ip literal: " + target.kind());
        };
        if (bytes == null) {
            throw new IllegalArgumentException("target host is not canonical");
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("16 bytes are always a valid address", e);
        }
    }

    /** A canonical host, its kind, and the port if one was written. */
    record HostPort(String host, HostKind kind, OptionalInt port) {}

    /** Splits and canonicalises {@code host[:port]} or {@code [v6][:port]}; the port stays optional. */
    static HostPort split(String input) throws MalformedTargetException {
        if (input == null || input.isEmpty()) {
            throw new MalformedTargetException("empty authority");
        }
        if (input.length() > MAX_INPUT) {
            throw new MalformedTargetException("authority too long");
        }
        boolean bracketed = input.charAt(0) == '[';
        checkCharacters(input, bracketed);
        if (bracketed) {
            return splitBracketed(input);
        }
        if (input.indexOf('[') >= 0 || input.indexOf(']') >= 0) {
            throw new MalformedTargetException("brackets are only allowed around an ipv6 address");
        }
        int colon = input.indexOf(':');
        if (colon >= 0 && input.indexOf(':', colon + 1) >= 0) {
            throw new MalformedTargetException(
                    Ipv6Literals.parse(input) != null
                            ? "ipv6 address must be in brackets"
                            : "more than one ':' in authority");
        }
        String host = colon < 0 ? input : input.substring(0, colon);
        HostNames.Canonical canonical = HostNames.canonicalise(host);
        OptionalInt port = colon < 0 ? OptionalInt.empty() : OptionalInt.of(parsePort(input.substring(colon + 1)));
        return new HostPort(canonical.host(), canonical.kind(), port);
    }

    private static HostPort splitBracketed(String input) throws MalformedTargetException {
        int close = input.indexOf(']');
        if (close < 0) {
            throw new MalformedTargetException("missing ']' after ipv6 address");
        }
        String inside = input.substring(1, close);
        String rest = input.substring(close + 1);
        if (inside.indexOf('[') >= 0) {
            throw new MalformedTargetException("nested brackets");
        }
        if (!rest.isEmpty() && rest.charAt(0) != ':') {
            throw new MalformedTargetException("unexpected characters after ']'");
        }
        byte[] address = Ipv6Literals.parse(inside);
        if (address == null) {
            throw new MalformedTargetException("brackets must contain an ipv6 address");
        }
        OptionalInt port = rest.isEmpty() ? OptionalInt.empty() : OptionalInt.of(parsePort(rest.substring(1)));
        return new HostPort(Ipv6Literals.format(address), HostKind.IPV6, port);
    }

    /**
     * Refuses, before any other parsing, the characters that parser-confusion attacks rely on
     * ({@code @ \ # ? /}, percent-encoding, whitespace, controls), so no later step sees them.
     */
    private static void checkCharacters(String input, boolean bracketed) throws MalformedTargetException {
        for (int i = 0; i < input.length(); i++) {
            char c = input.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                throw new MalformedTargetException("control character in authority");
            }
            switch (c) {
                case '@' -> throw new MalformedTargetException("userinfo is not allowed");
                case '%' ->
                    throw new MalformedTargetException(
                            bracketed ? "ipv6 zone id is not allowed" : "percent-encoding is not allowed in host");
                case ' ' -> throw new MalformedTargetException("space in authority");
                case '\\', '/', '?', '#' ->
                    throw new MalformedTargetException("'" + c + "' is not allowed in authority");
                default -> {}
            }
        }
    }

    private static int parsePort(String text) throws MalformedTargetException {
        if (text.isEmpty()) {
            throw new MalformedTargetException("empty port");
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new MalformedTargetException("port is not a decimal number");
            }
        }
        if (text.length() > 1 && text.charAt(0) == '0') {
            // Refused rather than read: some parsers take a leading 0 as octal.
            throw new MalformedTargetException("port has leading zeros");
        }
        if (text.length() > 5 || Integer.parseInt(text) < 1 || Integer.parseInt(text) > 65535) {
            throw new MalformedTargetException("port out of range");
        }
        return Integer.parseInt(text);
    }
}
