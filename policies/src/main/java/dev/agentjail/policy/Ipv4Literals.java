package dev.agentjail.policy;

/**
 * Reads IPv4 literals in every spelling that {@code inet_aton(3)} and browsers accept, so that a
 * disguised address is decided on as the address it really is.
 */
final class Ipv4Literals {
    private static final long MAX_ADDRESS = 0xFFFF_FFFFL;

    private Ipv4Literals() {}

    /**
     * Whether a host whose last label is this must be read as an IPv4 address: all decimal digits,
     * or {@code 0x} followed by hex digits. Such a host is never a DNS name (URL standard, "ends in a
     * number"); if it is not a valid address it is refused rather than resolved.
     */
    static boolean looksNumeric(String label) {
        if (label.startsWith("0x") || label.startsWith("0X")) {
            return allMatch(label.substring(2), 16);
        }
        return !label.isEmpty() && allMatch(label, 10);
    }

    /**
     * Parses the 1 to 4 dot-separated parts of an {@code inet_aton} address (each decimal, octal
     * with a leading {@code 0}, or hex with {@code 0x}; the last part fills the remaining bytes).
     *
     * @return the address as an unsigned 32-bit value, or -1 when it is not a valid address
     */
    static long parseInetAton(String[] parts) {
        if (parts.length < 1 || parts.length > 4) {
            return -1;
        }
        long address = 0;
        for (int i = 0; i < parts.length; i++) {
            long value = parsePart(parts[i]);
            boolean last = i == parts.length - 1;
            long max = last ? MAX_ADDRESS >>> (8 * i) : 0xFF;
            if (value < 0 || value > max) {
                return -1;
            }
            address |= last ? value : value << (8 * (3 - i));
        }
        return address;
    }

    /** Strict dotted-quad decimal (the only form RFC 4291 allows inside IPv6), or null. */
    static byte[] parseDottedQuad(String text) {
        String[] parts = text.split("\\.", -1);
        if (parts.length != 4) {
            return null;
        }
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            String part = parts[i];
            boolean leadingZero = part.length() > 1 && part.charAt(0) == '0';
            if (part.isEmpty() || part.length() > 3 || leadingZero || !allMatch(part, 10)) {
                return null;
            }
            int value = Integer.parseInt(part);
            if (value > 255) {
                return null;
            }
            bytes[i] = (byte) value;
        }
        return bytes;
    }

    static String format(long address) {
        return ((address >>> 24) & 0xFF) + "." + ((address >>> 16) & 0xFF) + "." + ((address >>> 8) & 0xFF) + "."
                + (address & 0xFF);
    }

    static String format(byte[] bytes, int offset) {
        return (bytes[offset] & 0xFF) + "." + (bytes[offset + 1] & 0xFF) + "." + (bytes[offset + 2] & 0xFF) + "."
                + (bytes[offset + 3] & 0xFF);
    }

    private static long parsePart(String part) {
        int radix = 10;
        String digits = part;
        if (part.startsWith("0x") || part.startsWith("0X")) {
            radix = 16;
            digits = part.substring(2);
        } else if (part.length() > 1 && part.charAt(0) == '0') {
            radix = 8;
            digits = part.substring(1);
        }
        if (digits.isEmpty()) {
            return -1;
        }
        long value = 0;
        for (int i = 0; i < digits.length(); i++) {
            int digit = Character.digit(digits.charAt(i), radix);
            if (digit < 0) {
                return -1;
            }
            value = value * radix + digit;
            if (value > MAX_ADDRESS) {
                // Leading zeros never overflow, so this bound alone keeps long arithmetic exact.
                return -1;
            }
        }
        return value;
    }

    private static boolean allMatch(String text, int radix) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c > 0x7F || Character.digit(c, radix) < 0) {
                return false;
            }
        }
        return true;
    }
}
