package dev.agentjail.certs;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Checks that a host is in the canonical form the proxy hands over (lower-case DNS name, dotted-quad
 * IPv4, RFC 5952 IPv6 without brackets) and tells which kind of SAN it needs.
 */
final class HostLiterals {
    static final int MAX_NAME = 253;
    static final int MAX_LABEL = 63;

    enum Kind {
        DNS,
        IPV4,
        IPV6
    }

    private HostLiterals() {}

    /** The kind of a canonical host; IllegalArgumentException with the reason otherwise. */
    static Kind classify(String host) {
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("empty host");
        }
        if (host.indexOf(':') >= 0) {
            String canonical = formatIpv6(ipv6Bytes(host));
            if (!canonical.equals(host)) {
                throw new IllegalArgumentException(
                        "IPv6 host not in canonical form: " + host + " (expected " + canonical + ")");
            }
            return Kind.IPV6;
        }
        if (host.length() > MAX_NAME) {
            throw new IllegalArgumentException("host name longer than " + MAX_NAME + " characters");
        }
        String[] labels = host.split("\\.", -1);
        for (String label : labels) {
            checkLabel(host, label);
        }
        String last = labels[labels.length - 1];
        if (!last.isEmpty() && last.chars().allMatch(c -> c >= '0' && c <= '9')) {
            ipv4Bytes(host);
            return Kind.IPV4;
        }
        return Kind.DNS;
    }

    /** The 4 bytes of a dotted quad without leading zeros. */
    static byte[] ipv4Bytes(String host) {
        String[] parts = host.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("not a canonical dotted-quad IPv4 address: " + host);
        }
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            String p = parts[i];
            boolean digits = !p.isEmpty() && p.length() <= 3 && p.chars().allMatch(c -> c >= '0' && c <= '9');
            if (!digits || (p.length() > 1 && p.charAt(0) == '0') || Integer.parseInt(p) > 255) {
                throw new IllegalArgumentException("not a canonical dotted-quad IPv4 address: " + host);
            }
            bytes[i] = (byte) Integer.parseInt(p);
        }
        return bytes;
    }

    /** The 16 bytes of an IPv6 literal (IPv4-mapped addresses stay 16 bytes). */
    static byte[] ipv6Bytes(String host) {
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            boolean ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.';
            if (!ok) {
                throw new IllegalArgumentException(
                        "not a canonical IPv6 literal (no brackets, zone or upper case): " + host);
            }
        }
        InetAddress address;
        try {
            // Text with a ':' is only ever parsed as an IPv6 literal, never looked up.
            address = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("invalid IPv6 literal: " + host);
        }
        byte[] raw = address.getAddress();
        if (address instanceof Inet4Address) {
            // The JDK turns ::ffff:a.b.c.d into an IPv4 address; the client asked for the IPv6 one.
            byte[] mapped = new byte[16];
            mapped[10] = (byte) 0xff;
            mapped[11] = (byte) 0xff;
            System.arraycopy(raw, 0, mapped, 12, 4);
            return mapped;
        }
        return raw;
    }

    /** RFC 5952 text: lower-case hex, no leading zeros, the first longest run of 2+ zero groups as "::". */
    static String formatIpv6(byte[] b) {
        boolean mapped = true;
        for (int i = 0; i < 10; i++) {
            mapped &= b[i] == 0;
        }
        if (mapped && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff) {
            return "::ffff:" + (b[12] & 0xff) + "." + (b[13] & 0xff) + "." + (b[14] & 0xff) + "." + (b[15] & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; ) {
            int end = i;
            while (end < 8 && groups[end] == 0) {
                end++;
            }
            if (end - i > bestLength) {
                bestStart = i;
                bestLength = end - i;
            }
            i = end == i ? i + 1 : end;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                out.append("::");
                i += bestLength - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
                out.append(':');
            }
            out.append(Integer.toHexString(groups[i]));
        }
        return out.toString();
    }

    private static void checkLabel(String host, String label) {
        if (label.isEmpty()) {
            throw new IllegalArgumentException("empty label in host: " + host);
        }
        if (label.length() > MAX_LABEL) {
            throw new IllegalArgumentException("label longer than " + MAX_LABEL + " characters in host: " + host);
        }
        for (int i = 0; i < label.length(); i++) {
            char c = label.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            if (!ok) {
                throw new IllegalArgumentException(
                        c == '*'
                                ? "wildcards are never minted: " + host
                                : "host is not a canonical lower-case DNS name: " + host);
            }
        }
        if (label.charAt(0) == '-' || label.charAt(label.length() - 1) == '-') {
            throw new IllegalArgumentException("label starts or ends with '-' in host: " + host);
        }
    }
}
