package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.List;

/**
 * Parses IPv6 text strictly (no zone id, embedded IPv4 only as a strict dotted quad in the last 32
 * bits) and prints it in RFC 5952 form.
 *
 * <p>Canonical text: lower-case hex without leading zeros, the longest run of two or more zero
 * groups (the first on a tie) written as {@code ::}, and IPv4-mapped addresses ({@code
 * ::ffff:0:0/96}) written as {@code ::ffff:a.b.c.d} (RFC 5952 section 5). Other addresses, including
 * the deprecated IPv4-compatible {@code ::a.b.c.d}, are printed in hex ({@code ::7f00:1}).
 */
final class Ipv6Literals {
    private static final int GROUPS = 8;

    private Ipv6Literals() {}

    /** The 16 bytes of the address, or null when the text is not a valid IPv6 address. */
    static byte[] parse(String text) {
        int gap = text.indexOf("::");
        if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
            return null;
        }
        List<Integer> head = gap < 0 ? groups(text, true) : groups(text.substring(0, gap), false);
        List<Integer> tail = gap < 0 ? List.of() : groups(text.substring(gap + 2), true);
        if (head == null || tail == null) {
            return null;
        }
        int count = head.size() + tail.size();
        // "::" stands for at least one zero group (RFC 4291 2.2), so a full address cannot have it.
        if (gap < 0 ? count != GROUPS : count > GROUPS - 1) {
            return null;
        }
        byte[] bytes = new byte[16];
        for (int i = 0; i < head.size(); i++) {
            put(bytes, i, head.get(i));
        }
        for (int i = 0; i < tail.size(); i++) {
            put(bytes, GROUPS - tail.size() + i, tail.get(i));
        }
        return bytes;
    }

    /** RFC 5952 text for 16 address bytes (see the class comment for IPv4-mapped addresses). */
    static String format(byte[] bytes) {
        if (isIpv4Mapped(bytes)) {
            return "::ffff:" + Ipv4Literals.format(bytes, 12);
        }
        int[] groups = new int[GROUPS];
        for (int i = 0; i < GROUPS; i++) {
            groups[i] = ((bytes[2 * i] & 0xFF) << 8) | (bytes[2 * i + 1] & 0xFF);
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is never compressed (RFC 5952 4.2.2)
        for (int i = 0; i < GROUPS; ) {
            int end = i;
            while (end < GROUPS && groups[end] == 0) {
                end++;
            }
            if (end - i > bestLength) {
                bestStart = i;
                bestLength = end - i;
            }
            i = end == i ? i + 1 : end;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < GROUPS; i++) {
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

    static boolean isIpv4Mapped(byte[] bytes) {
        if (bytes.length != 16) {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[10] == (byte) 0xFF && bytes[11] == (byte) 0xFF;
    }

    /**
     * Groups of one side of {@code ::}; an embedded IPv4 quad counts as two groups and is allowed
     * only at the very end of the address.
     */
    private static List<Integer> groups(String text, boolean mayEndInIpv4) {
        List<Integer> out = new ArrayList<>();
        if (text.isEmpty()) {
            return out;
        }
        String[] parts = text.split(":", -1);
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i];
            if (part.indexOf('.') >= 0) {
                byte[] quad = i == parts.length - 1 && mayEndInIpv4 ? Ipv4Literals.parseDottedQuad(part) : null;
                if (quad == null) {
                    return null;
                }
                out.add(((quad[0] & 0xFF) << 8) | (quad[1] & 0xFF));
                out.add(((quad[2] & 0xFF) << 8) | (quad[3] & 0xFF));
            } else {
                int group = parseGroup(part);
                if (group < 0) {
                    return null;
                }
                out.add(group);
            }
        }
        return out;
    }

    private static int parseGroup(String part) {
        if (part.isEmpty() || part.length() > 4) {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            int digit = c > 0x7F ? -1 : Character.digit(c, 16);
            if (digit < 0) {
                return -1;
            }
            value = value * 16 + digit;
        }
        return value;
    }

    private static void put(byte[] bytes, int group, int value) {
        bytes[2 * group] = (byte) (value >>> 8);
        bytes[2 * group + 1] = (byte) value;
    }
}
