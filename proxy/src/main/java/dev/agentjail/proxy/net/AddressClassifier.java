package dev.agentjail.proxy.net;

import static dev.agentjail.proxy.net.AddressClass.BROADCAST;
import static dev.agentjail.proxy.net.AddressClass.CGNAT;
import static dev.agentjail.proxy.net.AddressClass.LINK_LOCAL;
import static dev.agentjail.proxy.net.AddressClass.LOOPBACK;
import static dev.agentjail.proxy.net.AddressClass.METADATA;
import static dev.agentjail.proxy.net.AddressClass.MULTICAST;
import static dev.agentjail.proxy.net.AddressClass.PRIVATE;
import static dev.agentjail.proxy.net.AddressClass.PUBLIC;
import static dev.agentjail.proxy.net.AddressClass.RESERVED;
import static dev.agentjail.proxy.net.AddressClass.SITE_LOCAL;
import static dev.agentjail.proxy.net.AddressClass.UNIQUE_LOCAL;
import static dev.agentjail.proxy.net.AddressClass.UNSPECIFIED;

import java.net.InetAddress;
import java.util.List;
import java.util.Objects;

/**
 * Classifies a resolved address for the SSRF guard, including IPv4 addresses embedded in IPv6 transition forms.
 *
 * <p>Tables are ordered, first match wins. IPv6 is fail-closed: only 2000::/3 can be {@link AddressClass#PUBLIC},
 * so a range nobody listed here is denied rather than dialled.
 */
public final class AddressClassifier {

    /** Maps the high and low 64 bits of an IPv6 address that matched a prefix to its class. */
    @FunctionalInterface
    private interface V6Rule {
        AddressClass classify(long hi, long lo);
    }

    private record V4Block(int network, int length, AddressClass addressClass) {
        boolean contains(int address) {
            int mask = length == 0 ? 0 : -1 << (32 - length);
            return (address & mask) == network;
        }
    }

    private record V6Block(long hi, long lo, int length, V6Rule rule) {
        boolean contains(long h, long l) {
            if (length <= 64) {
                long mask = length == 0 ? 0 : -1L << (64 - length);
                return (h & mask) == hi;
            }
            long mask = -1L << (128 - length);
            return h == hi && (l & mask) == lo;
        }
    }

    private static final List<V4Block> V4 = List.of(
            // Exact addresses before the ranges that contain them.
            v4(255, 255, 255, 255, 32, BROADCAST),
            // Azure's wire server sits in public space, so only an explicit entry catches it.
            v4(168, 63, 129, 16, 32, METADATA),
            v4(0, 0, 0, 0, 8, UNSPECIFIED),
            v4(10, 0, 0, 0, 8, PRIVATE),
            v4(100, 64, 0, 0, 10, CGNAT),
            v4(127, 0, 0, 0, 8, LOOPBACK),
            v4(169, 254, 0, 0, 16, LINK_LOCAL),
            v4(172, 16, 0, 0, 12, PRIVATE),
            v4(192, 0, 0, 0, 24, RESERVED), // IETF protocol assignments
            v4(192, 0, 2, 0, 24, RESERVED), // TEST-NET-1
            v4(192, 88, 99, 0, 24, RESERVED), // deprecated 6to4 relay anycast
            v4(192, 168, 0, 0, 16, PRIVATE),
            v4(198, 18, 0, 0, 15, RESERVED), // benchmarking
            v4(198, 51, 100, 0, 24, RESERVED), // TEST-NET-2
            v4(203, 0, 113, 0, 24, RESERVED), // TEST-NET-3
            v4(224, 0, 0, 0, 4, MULTICAST),
            v4(240, 0, 0, 0, 4, RESERVED));

    private static final List<V6Block> V6 = List.of(
            v6(0L, 0L, 128, fixed(UNSPECIFIED)), // ::
            v6(0L, 1L, 128, fixed(LOOPBACK)), // ::1
            // AWS IMDS over IPv6 is inside fc00::/7 but deserves its own reason code.
            v6(0xfd00_0ec2_0000_0000L, 0x254L, 128, fixed(METADATA)), // fd00:ec2::254
            v6(0xff00_0000_0000_0000L, 0L, 8, fixed(MULTICAST)), // ff00::/8
            v6(0xfe80_0000_0000_0000L, 0L, 10, fixed(LINK_LOCAL)), // fe80::/10
            v6(0xfec0_0000_0000_0000L, 0L, 10, fixed(SITE_LOCAL)), // fec0::/10
            v6(0xfc00_0000_0000_0000L, 0L, 7, fixed(UNIQUE_LOCAL)), // fc00::/7
            // The kernel dials IPv4-mapped and well-known NAT64 addresses as the IPv4 inside.
            v6(0L, 0x0000_ffff_0000_0000L, 96, (hi, lo) -> classifyV4((int) lo)), // ::ffff:0:0/96
            v6(0x0064_ff9b_0000_0000L, 0L, 96, (hi, lo) -> classifyV4((int) lo)), // 64:ff9b::/96
            // Not globally routable even when the IPv4 inside is public; the inner class is the better reason.
            v6(0L, 0L, 96, (hi, lo) -> notPublicOr(classifyV4((int) lo), RESERVED)), // ::/96 IPv4-compatible
            v6(0L, 0xffff_0000_0000_0000L, 96, (hi, lo) -> notPublicOr(classifyV4((int) lo), RESERVED)), // SIIT
            // Local-use NAT64 (RFC 8215) may place the IPv4 at several offsets; we check the /96 one and deny
            // the rest because we cannot tell which prefix length the local translator uses.
            v6(0x0064_ff9b_0001_0000L, 0L, 48, (hi, lo) -> notPublicOr(classifyV4((int) lo), RESERVED)),
            v6(0x2001_0000_0000_0000L, 0L, 32, AddressClassifier::teredo), // 2001::/32
            v6(0x2001_0db8_0000_0000L, 0L, 32, fixed(RESERVED)), // documentation
            v6(0x2001_0000_0000_0000L, 0L, 23, fixed(RESERVED)), // IETF protocol assignments (after Teredo)
            v6(0x2002_0000_0000_0000L, 0L, 16, (hi, lo) -> classifyV4((int) (hi >>> 16))), // 6to4
            v6(0x3fff_0000_0000_0000L, 0L, 20, fixed(RESERVED)), // documentation (RFC 9637)
            v6(0x5f00_0000_0000_0000L, 0L, 16, fixed(RESERVED)), // SRv6 SIDs
            v6(0x2000_0000_0000_0000L, 0L, 3, fixed(PUBLIC))); // global unicast

    private AddressClassifier() {}

    /** Returns the class of {@code address}; for IPv6 forms that embed IPv4, a non-public inner class wins. */
    public static AddressClass classify(InetAddress address) {
        Objects.requireNonNull(address, "address");
        byte[] b = address.getAddress();
        // Inet4Address also covers ::ffff:a.b.c.d, which InetAddress converts on parsing.
        return b.length == 4 ? classifyV4((int) bits(b, 0, 4)) : classifyV6(bits(b, 0, 8), bits(b, 8, 8));
    }

    private static AddressClass classifyV4(int address) {
        for (V4Block block : V4) {
            if (block.contains(address)) {
                return block.addressClass();
            }
        }
        return PUBLIC;
    }

    private static AddressClass classifyV6(long hi, long lo) {
        for (V6Block block : V6) {
            if (block.contains(hi, lo)) {
                return block.rule().classify(hi, lo);
            }
        }
        return RESERVED;
    }

    /** Teredo carries the server IPv4 in bits 32–63 and the client's, inverted, in the last 32 bits. */
    private static AddressClass teredo(long hi, long lo) {
        // The client address is where a relay would deliver the packets, so it speaks first.
        AddressClass client = classifyV4(~(int) lo);
        return client != PUBLIC ? client : classifyV4((int) hi);
    }

    private static AddressClass notPublicOr(AddressClass inner, AddressClass otherwise) {
        return inner != PUBLIC ? inner : otherwise;
    }

    private static V6Rule fixed(AddressClass addressClass) {
        return (hi, lo) -> addressClass;
    }

    private static long bits(byte[] b, int from, int count) {
        long value = 0;
        for (int i = from; i < from + count; i++) {
            value = (value << 8) | (b[i] & 0xff);
        }
        return value;
    }

    private static V4Block v4(int a, int b, int c, int d, int length, AddressClass addressClass) {
        return new V4Block((a << 24) | (b << 16) | (c << 8) | d, length, addressClass);
    }

    private static V6Block v6(long hi, long lo, int length, V6Rule rule) {
        return new V6Block(hi, lo, length, rule);
    }
}
