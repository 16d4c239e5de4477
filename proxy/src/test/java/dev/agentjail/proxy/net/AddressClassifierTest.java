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
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AddressClassifierTest {

    /**
     * Corpus cases 31–34 and 39. The first column is the spelling the agent sends; the canonicaliser and resolver turn
     * it into the address in the second column, which is what the classifier sees.
     */
    static Stream<Arguments> corpus() {
        return Stream.of(
                // 31: loopback in every spelling
                row("31 127.0.0.1", "127.0.0.1", LOOPBACK),
                row("31 127.1", "127.0.0.1", LOOPBACK),
                row("31 127.0.1", "127.0.0.1", LOOPBACK),
                row("31 0177.0.0.1", "127.0.0.1", LOOPBACK),
                row("31 0x7f.0.0.1", "127.0.0.1", LOOPBACK),
                row("31 0x7f000001", "127.0.0.1", LOOPBACK),
                row("31 2130706433", "127.0.0.1", LOOPBACK),
                row("31 017700000001", "127.0.0.1", LOOPBACK),
                row("31 127.127.127.127", "127.127.127.127", LOOPBACK),
                row("31 127.255.255.255", "127.255.255.255", LOOPBACK),
                row("31 localhost (A)", "127.0.0.1", LOOPBACK),
                row("31 localhost (AAAA)", "::1", LOOPBACK),
                row("31 [::1]", "::1", LOOPBACK),
                row("31 [0:0:0:0:0:0:0:1]", "0:0:0:0:0:0:0:1", LOOPBACK),
                row("31 [::ffff:127.0.0.1]", "::ffff:127.0.0.1", LOOPBACK),
                row("31 [::ffff:7f00:1]", "::ffff:7f00:1", LOOPBACK),
                row("31 [::127.0.0.1]", "::127.0.0.1", LOOPBACK),
                // 32: unspecified
                row("32 0.0.0.0", "0.0.0.0", UNSPECIFIED),
                row("32 0", "0.0.0.0", UNSPECIFIED),
                row("32 [::]", "::", UNSPECIFIED),
                row("32 [0000::1]", "0000::1", LOOPBACK),
                // 33: cloud metadata
                row("33 169.254.169.254", "169.254.169.254", LINK_LOCAL),
                row("33 2852039166", "169.254.169.254", LINK_LOCAL),
                row("33 0251.254.169.254", "169.254.169.254", LINK_LOCAL),
                row("33 [::ffff:169.254.169.254]", "::ffff:169.254.169.254", LINK_LOCAL),
                row("33 [fd00:ec2::254]", "fd00:ec2::254", METADATA),
                row("33 169.254.170.2", "169.254.170.2", LINK_LOCAL),
                row("33 100.100.100.200", "100.100.100.200", CGNAT),
                row("33 168.63.129.16", "168.63.129.16", METADATA),
                row("33 metadata.allowed.test", "169.254.169.254", LINK_LOCAL),
                // 34: RFC 1918, CGNAT and special ranges
                row("34 10.0.0.1", "10.0.0.1", PRIVATE),
                row("34 172.16.0.1", "172.16.0.1", PRIVATE),
                row("34 192.168.0.1", "192.168.0.1", PRIVATE),
                row("34 100.64.0.1", "100.64.0.1", CGNAT),
                row("34 100.127.255.254", "100.127.255.254", CGNAT),
                row("34 100.63.255.254", "100.63.255.254", PUBLIC),
                row("34 100.128.0.1", "100.128.0.1", PUBLIC),
                row("34 198.18.0.1", "198.18.0.1", RESERVED),
                row("34 192.0.0.1", "192.0.0.1", RESERVED),
                row("34 192.0.2.1", "192.0.2.1", RESERVED),
                row("34 224.0.0.1", "224.0.0.1", MULTICAST),
                row("34 240.0.0.1", "240.0.0.1", RESERVED),
                row("34 255.255.255.255", "255.255.255.255", BROADCAST),
                row("34 [ff02::2]", "ff02::2", MULTICAST),
                row("34 [fe80::1]", "fe80::1", LINK_LOCAL),
                row("34 [fc00::1]", "fc00::1", UNIQUE_LOCAL),
                row("34 [fec0::1]", "fec0::1", SITE_LOCAL),
                // 39: both families are classified
                row("39 A 203.0.113.7", "203.0.113.7", RESERVED),
                row("39 AAAA ::1", "::1", LOOPBACK));
    }

    /** Range edges: the first and last address of each block and their public neighbours. */
    static Stream<Arguments> edges() {
        return Stream.of(
                row("public v4", "93.184.215.14", PUBLIC),
                row("public v4 1.1.1.1", "1.1.1.1", PUBLIC),
                row("0/8 last", "0.255.255.255", UNSPECIFIED),
                row("after 0/8", "1.0.0.0", PUBLIC),
                row("before 10/8", "9.255.255.255", PUBLIC),
                row("10/8 last", "10.255.255.255", PRIVATE),
                row("after 10/8", "11.0.0.0", PUBLIC),
                row("before 127/8", "126.255.255.255", PUBLIC),
                row("after 127/8", "128.0.0.0", PUBLIC),
                row("before 169.254/16", "169.253.255.255", PUBLIC),
                row("169.254/16 last", "169.254.255.255", LINK_LOCAL),
                row("after 169.254/16", "169.255.0.0", PUBLIC),
                row("before 172.16/12", "172.15.255.255", PUBLIC),
                row("172.16/12 last", "172.31.255.255", PRIVATE),
                row("after 172.16/12", "172.32.0.0", PUBLIC),
                row("after 192.0.0/24", "192.0.1.0", PUBLIC),
                row("6to4 relay anycast", "192.88.99.1", RESERVED),
                row("before 192.168/16", "192.167.255.255", PUBLIC),
                row("after 192.168/16", "192.169.0.0", PUBLIC),
                row("before 198.18/15", "198.17.255.255", PUBLIC),
                row("198.18/15 last", "198.19.255.255", RESERVED),
                row("after 198.18/15", "198.20.0.0", PUBLIC),
                row("TEST-NET-2", "198.51.100.1", RESERVED),
                row("Azure neighbour below", "168.63.129.15", PUBLIC),
                row("Azure neighbour above", "168.63.129.17", PUBLIC),
                row("before 224/4", "223.255.255.255", PUBLIC),
                row("224/4 last", "239.255.255.255", MULTICAST),
                row("240/4 last before broadcast", "255.255.255.254", RESERVED),
                row("public v6", "2606:4700:4700::1111", PUBLIC),
                row("public v6 google", "2001:4860:4860::8888", PUBLIC),
                row("fc00::/7 upper half", "fdff:ffff::1", UNIQUE_LOCAL),
                row("AWS IMDS neighbour", "fd00:ec2::253", UNIQUE_LOCAL),
                row("fe80::/10 last", "febf:ffff::1", LINK_LOCAL),
                row("fec0::/10 last", "feff:ffff::1", SITE_LOCAL),
                row("v6 documentation", "2001:db8::1", RESERVED),
                row("v6 documentation 3fff", "3fff::1", RESERVED),
                row("v6 benchmarking", "2001:2::1", RESERVED),
                row("IETF protocol block", "2001:1::1", RESERVED),
                row("after 2001::/23", "2001:200::1", PUBLIC),
                row("discard 100::/64", "100::1", RESERVED),
                row("SRv6 SID", "5f00::1", RESERVED),
                row("outside 2000::/3", "4000::1", RESERVED),
                row("below 2000::/3", "1fff:ffff::1", RESERVED));
    }

    /** IPv6 forms that carry an IPv4 address inside. */
    static Stream<Arguments> embedded() {
        return Stream.of(
                row("mapped private", "::ffff:10.0.0.1", PRIVATE),
                row("mapped metadata", "::ffff:168.63.129.16", METADATA),
                row("mapped public", "::ffff:8.8.8.8", PUBLIC),
                row("compatible loopback", "::127.0.0.1", LOOPBACK),
                row("compatible private", "::10.1.2.3", PRIVATE),
                row("compatible public is still not routable", "::8.8.8.8", RESERVED),
                row("NAT64 loopback", "64:ff9b::7f00:1", LOOPBACK),
                row("NAT64 link-local", "64:ff9b::a9fe:a9fe", LINK_LOCAL),
                row("NAT64 Azure", "64:ff9b::a83f:8110", METADATA),
                row("NAT64 public", "64:ff9b::808:808", PUBLIC),
                row("NAT64 outside /96", "64:ff9b:0:1::808:808", RESERVED),
                row("local NAT64 private", "64:ff9b:1::a00:1", PRIVATE),
                row("local NAT64 public is local-use", "64:ff9b:1::808:808", RESERVED),
                row("SIIT loopback", "::ffff:0:7f00:1", LOOPBACK),
                row("6to4 loopback", "2002:7f00:1::", LOOPBACK),
                row("6to4 metadata", "2002:a9fe:a9fe::1", LINK_LOCAL),
                row("6to4 private", "2002:c0a8:101::1", PRIVATE),
                row("6to4 CGNAT", "2002:6464:64c8::1", CGNAT),
                row("6to4 public", "2002:808:808::1", PUBLIC),
                // Teredo: server 65.54.227.120; client inverted in the last 32 bits.
                row("Teredo client 192.168.1.1", "2001:0:4136:e378:8000:63bf:3f57:fefe", PRIVATE),
                row("Teredo client 127.0.0.1", "2001:0:4136:e378:8000:63bf:80ff:fffe", LOOPBACK),
                row("Teredo client 8.8.8.8, server 127.0.0.1", "2001:0:7f00:1:8000:63bf:f7f7:f7f7", LOOPBACK),
                row("Teredo client 8.8.8.8, server public", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", PUBLIC));
    }

    @ParameterizedTest(name = "{0} -> {2}")
    @MethodSource({"corpus", "edges", "embedded"})
    void classifies(String label, String literal, AddressClass expected) throws UnknownHostException {
        AddressClass actual = AddressClassifier.classify(literal(literal));
        assertEquals(expected, actual, label);
        assertEquals(expected.reason(), actual.reason(), label);
    }

    @ParameterizedTest(name = "{0} as Inet6Address -> {2}")
    @MethodSource("mappedAsInet6")
    void ipv4MappedIsClassifiedWhetherOrNotJavaConvertedIt(String label, String ipv4, AddressClass expected)
            throws UnknownHostException {
        byte[] v4 = literal(ipv4).getAddress();
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(v4, 0, mapped, 12, 4);
        InetAddress unconverted = Inet6Address.getByAddress(null, mapped, -1);
        assertInstanceOf(Inet6Address.class, unconverted, "the test must exercise the IPv6 path");

        assertEquals(expected, AddressClassifier.classify(unconverted), label);
        assertInstanceOf(Inet4Address.class, literal("::ffff:" + ipv4), "Java converts the textual form");
        assertEquals(expected, AddressClassifier.classify(literal("::ffff:" + ipv4)), label);
    }

    static Stream<Arguments> mappedAsInet6() {
        return Stream.of(
                row("loopback", "127.0.0.1", LOOPBACK),
                row("metadata", "169.254.169.254", LINK_LOCAL),
                row("Azure", "168.63.129.16", METADATA),
                row("CGNAT", "100.100.100.200", CGNAT),
                row("unspecified", "0.0.0.0", UNSPECIFIED),
                row("public", "8.8.8.8", PUBLIC));
    }

    @Test
    void zoneIdDoesNotChangeTheClass() throws UnknownHostException {
        byte[] linkLocal = literal("fe80::1").getAddress();
        assertEquals(LINK_LOCAL, AddressClassifier.classify(Inet6Address.getByAddress(null, linkLocal, 3)));
    }

    @Test
    void onlyPublicIsDialable() {
        for (AddressClass c : AddressClass.values()) {
            assertEquals(c == PUBLIC, c.dialable(), c.name());
        }
    }

    @Test
    void reasonCodesAreUniqueAndDenialsAreSsrfPrefixed() {
        Set<String> seen = new HashSet<>();
        for (AddressClass c : AddressClass.values()) {
            assertTrue(seen.add(c.reason()), "duplicate reason " + c.reason());
            assertEquals(c != PUBLIC, c.reason().startsWith("ssrf-"), c.name());
        }
    }

    @Test
    void rejectsNull() {
        assertThrows(NullPointerException.class, () -> AddressClassifier.classify(null));
    }

    private static Arguments row(String label, String literal, AddressClass expected) {
        return Arguments.of(label, literal, expected);
    }

    /** Parses a numeric literal; refuses anything that could make getByName query DNS. */
    private static InetAddress literal(String literal) throws UnknownHostException {
        if (!literal.chars().allMatch(ch -> Character.digit(ch, 16) >= 0 || ch == ':' || ch == '.')) {
            throw new IllegalArgumentException("not a numeric literal: " + literal);
        }
        InetAddress address = InetAddress.getByName(literal);
        assertTrue(Arrays.asList(4, 16).contains(address.getAddress().length));
        return address;
    }
}
