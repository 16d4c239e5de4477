package dev.agentjail.policy;

import java.net.IDN;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Canonicalises an unbracketed host: a DNS name (lower case, punycode, one trailing dot stripped)
 * or an IPv4 address in any {@code inet_aton} spelling, printed as a dotted quad.
 */
final class HostNames {
    /** RFC 1035 limits, counted on the name without its trailing dot. */
    static final int MAX_NAME = 253;

    static final int MAX_LABEL = 63;

    /** The four label separators of IDNA2003 (RFC 3490 3.1): full stop and its ideographic twins. */
    private static final Pattern IDNA_DOTS = Pattern.compile("[.\u3002\uFF0E\uFF61]");

    private HostNames() {}

    /** Canonical host and its kind; never resolves anything. */
    static Canonical canonicalise(String raw) throws MalformedTargetException {
        if (raw.isEmpty()) {
            throw new MalformedTargetException("empty host");
        }
        String ascii = isAscii(raw) ? raw : toAscii(raw);
        String name = ascii.toLowerCase(Locale.ROOT);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        if (name.isEmpty()) {
            throw new MalformedTargetException("empty host");
        }
        String[] labels = name.split("\\.", -1);
        for (String label : labels) {
            checkLabel(label);
        }
        if (name.length() > MAX_NAME) {
            throw new MalformedTargetException("host name longer than 253 characters");
        }
        if (Ipv4Literals.looksNumeric(labels[labels.length - 1])) {
            long address = Ipv4Literals.parseInetAton(labels);
            if (address < 0) {
                throw new MalformedTargetException("invalid ipv4 address");
            }
            return new Canonical(Ipv4Literals.format(address), HostKind.IPV4);
        }
        return new Canonical(name, HostKind.DNS);
    }

    /** A canonical host with its kind. */
    record Canonical(String host, HostKind kind) {}

    static boolean isAscii(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) > 0x7F) {
                return false;
            }
        }
        return true;
    }

    /**
     * IDNA ToASCII label by label. STD3 rules are left off here and enforced afterwards on the
     * result by {@link #checkLabel}, because we allow '_' (real hosts use it) which STD3 forbids.
     */
    private static String toAscii(String raw) throws MalformedTargetException {
        String[] labels = IDNA_DOTS.split(raw, -1);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < labels.length; i++) {
            if (i > 0) {
                out.append('.');
            }
            String label = labels[i];
            if (isAscii(label)) {
                out.append(label);
                continue;
            }
            String converted;
            try {
                converted = IDN.toASCII(label, 0);
            } catch (IllegalArgumentException e) {
                throw new MalformedTargetException("invalid internationalised host name");
            }
            if (converted.indexOf('.') >= 0) {
                // Nameprep can map one character to a dot (U+2488 becomes "1."), forging a new label.
                throw new MalformedTargetException("invalid internationalised host name");
            }
            out.append(converted);
        }
        return out.toString();
    }

    private static void checkLabel(String label) throws MalformedTargetException {
        if (label.isEmpty()) {
            throw new MalformedTargetException("empty label in host");
        }
        if (label.length() > MAX_LABEL) {
            throw new MalformedTargetException("label longer than 63 characters");
        }
        for (int i = 0; i < label.length(); i++) {
            char c = label.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            if (!ok) {
                // Also catches IDNA output outside our alphabet, e.g. U+00A0 mapped to a space.
                throw new MalformedTargetException("invalid character in host name");
            }
        }
        if (label.charAt(0) == '-' || label.charAt(label.length() - 1) == '-') {
            throw new MalformedTargetException("label starts or ends with '-'");
        }
    }
}
