package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AuthoritiesTest {

    /** CONNECT targets that parse, with the one canonical form every later step uses. Numbers are corpus cases. */
    static Stream<Arguments> canonicalConnectTargets() {
        return Stream.of(
                // 1, 22: case and one trailing dot
                arguments("ALLOWED.TEST:443", "allowed.test", HostKind.DNS, 443),
                arguments("allowed.test.:443", "allowed.test", HostKind.DNS, 443),
                arguments("INTERNAL.allowed.test.:443", "internal.allowed.test", HostKind.DNS, 443),
                arguments("a.b.c.wild.test:443", "a.b.c.wild.test", HostKind.DNS, 443),
                // 15: underscore is a label character like any other
                arguments("a_b.wild.test:443", "a_b.wild.test", HostKind.DNS, 443),
                arguments("allowed.test:1", "allowed.test", HostKind.DNS, 1),
                arguments("allowed.test:65535", "allowed.test", HostKind.DNS, 65535),
                // a label of exactly 63 and a name of exactly 253 characters are still valid (11)
                arguments("a".repeat(63) + ".test:443", "a".repeat(63) + ".test", HostKind.DNS, 443),
                arguments(name253() + ":443", name253(), HostKind.DNS, 443),
                arguments(name253() + ".:443", name253(), HostKind.DNS, 443),
                // 31: loopback in every spelling is canonicalised to the address it really is
                arguments("127.0.0.1:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("127.1:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("127.0.1:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("0177.0.0.1:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("0x7f.0.0.1:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("0X7F.0.0.1:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("0x7f000001:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("2130706433:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("017700000001:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("127.0.0.01:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("127.0.0.1.:443", "127.0.0.1", HostKind.IPV4, 443),
                arguments("127.127.127.127:443", "127.127.127.127", HostKind.IPV4, 443),
                arguments("127.255.255.255:443", "127.255.255.255", HostKind.IPV4, 443),
                arguments("localhost:443", "localhost", HostKind.DNS, 443),
                arguments("localhost.:443", "localhost", HostKind.DNS, 443),
                arguments("LOCALHOST:443", "localhost", HostKind.DNS, 443),
                arguments("[::1]:443", "::1", HostKind.IPV6, 443),
                arguments("[0:0:0:0:0:0:0:1]:443", "::1", HostKind.IPV6, 443),
                arguments("[::ffff:127.0.0.1]:443", "::ffff:127.0.0.1", HostKind.IPV6, 443),
                arguments("[::ffff:7f00:1]:443", "::ffff:127.0.0.1", HostKind.IPV6, 443),
                arguments("[::FFFF:7F00:0001]:443", "::ffff:127.0.0.1", HostKind.IPV6, 443),
                arguments("[::127.0.0.1]:443", "::7f00:1", HostKind.IPV6, 443),
                // 32: unspecified address
                arguments("0.0.0.0:443", "0.0.0.0", HostKind.IPV4, 443),
                arguments("0:443", "0.0.0.0", HostKind.IPV4, 443),
                arguments("[::]:443", "::", HostKind.IPV6, 443),
                arguments("[0000::1]:443", "::1", HostKind.IPV6, 443),
                // 33: metadata addresses
                arguments("169.254.169.254:443", "169.254.169.254", HostKind.IPV4, 443),
                arguments("2852039166:443", "169.254.169.254", HostKind.IPV4, 443),
                arguments("0251.254.169.254:443", "169.254.169.254", HostKind.IPV4, 443),
                arguments("[::ffff:169.254.169.254]:443", "::ffff:169.254.169.254", HostKind.IPV6, 443),
                arguments("[::ffff:a9fe:a9fe]:443", "::ffff:169.254.169.254", HostKind.IPV6, 443),
                arguments("[fd00:ec2::254]:443", "fd00:ec2::254", HostKind.IPV6, 443),
                // 34: special ranges parse; classifying them is the SSRF guard's job
                arguments("100.64.0.1:443", "100.64.0.1", HostKind.IPV4, 443),
                arguments("255.255.255.255:443", "255.255.255.255", HostKind.IPV4, 443),
                arguments("4294967295:443", "255.255.255.255", HostKind.IPV4, 443),
                arguments("[FF02::2]:443", "ff02::2", HostKind.IPV6, 443),
                arguments("[fe80::1]:443", "fe80::1", HostKind.IPV6, 443),
                // 19 and RFC 5952: one canonical IPv6 text
                arguments("[2001:0DB8:0000::0001]:443", "2001:db8::1", HostKind.IPV6, 443),
                arguments("[2001:db8:0:0:1:0:0:1]:443", "2001:db8::1:0:0:1", HostKind.IPV6, 443),
                arguments("[2001:0:0:1:0:0:0:1]:443", "2001:0:0:1::1", HostKind.IPV6, 443),
                arguments("[2001:db8:0:1:1:1:1:1]:443", "2001:db8:0:1:1:1:1:1", HostKind.IPV6, 443),
                arguments("[1:0:0:0:0:0:0:0]:443", "1::", HostKind.IPV6, 443),
                arguments("[1:2:3:4:5:6:7::]:443", "1:2:3:4:5:6:7:0", HostKind.IPV6, 443),
                arguments("[0:0:0:0:0:ffff:192.0.2.1]:443", "::ffff:192.0.2.1", HostKind.IPV6, 443),
                // 16: IDN becomes punycode (the homograph simply becomes a different name)
                arguments("b\u00fccher.test:443", "xn--bcher-kva.test", HostKind.DNS, 443),
                arguments("B\u00dcCHER.test:443", "xn--bcher-kva.test", HostKind.DNS, 443),
                // IDNA2003 label separators and full-width letters map to the name a resolver would use
                arguments("allowed\u3002test:443", "allowed.test", HostKind.DNS, 443),
                arguments("\uff21llowed.test:443", "allowed.test", HostKind.DNS, 443));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("canonicalConnectTargets")
    void connectTargetIsCanonicalised(String input, String host, HostKind kind, int port) throws Exception {
        assertEquals(new Target(host, kind, port), Authorities.parseConnectTarget(input));
    }

    @Test
    void homographBecomesPunycodeAndNotTheLatinName() throws Exception {
        // 16: first letter is Cyrillic U+0430.
        Target target = Authorities.parseConnectTarget("\u0430llowed.test:443");
        assertEquals(HostKind.DNS, target.kind());
        assertTrue(target.host().startsWith("xn--"), target.host());
        assertTrue(target.host().endsWith(".test"), target.host());
        assertFalse(target.host().equals("allowed.test"));
    }

    /** Inputs the strict parser refuses, with the reason it gives. Numbers are corpus cases. */
    static Stream<Arguments> rejectedConnectTargets() {
        return Stream.of(
                // 9: double trailing dot, empty labels
                arguments("allowed.test..:443", "empty label in host"),
                arguments("allowed..test:443", "empty label in host"),
                arguments(".allowed.test:443", "empty label in host"),
                arguments(".:443", "empty host"),
                arguments("..:443", "empty label in host"),
                // 10: NUL, CR/LF, percent-encoded CRLF, zone-id payload
                arguments("evil.test\u0000.allowed.test:443", "control character in authority"),
                arguments("evil.test\r\n.allowed.test:443", "control character in authority"),
                arguments("evil.test\t.allowed.test:443", "control character in authority"),
                arguments("evil.test%0d%0a.allowed.test:443", "percent-encoding is not allowed in host"),
                arguments("[::ffff:127.0.0.1%25x.allowed.test]:443", "ipv6 zone id is not allowed"),
                // 11: length limits
                arguments("a".repeat(64) + ".test:443", "label longer than 63 characters"),
                arguments(name253() + "a:443", "host name longer than 253 characters"),
                arguments("a.".repeat(128) + ":443", "host name longer than 253 characters"),
                arguments("a".repeat(2000) + ":443", "authority too long"),
                // 12, 13, 46: userinfo and parser-confusion authorities
                arguments("allowed.test@evil.test:443", "userinfo is not allowed"),
                arguments("allowed.test:80@evil.test:443", "userinfo is not allowed"),
                arguments("user@allowed.test:443", "userinfo is not allowed"),
                arguments("allowed.test:443@evil.test:443", "userinfo is not allowed"),
                arguments("allowed.test\\@evil.test:443", "'\\' is not allowed in authority"),
                arguments("evil.test#@allowed.test:443", "'#' is not allowed in authority"),
                arguments("evil.test?@allowed.test:443", "'?' is not allowed in authority"),
                arguments("allowed.test:80\\@@evil.test:80", "'\\' is not allowed in authority"),
                arguments("1.1.1.1 &@2.2.2.2# @3.3.3.3", "space in authority"),
                arguments("https://allowed.test:443", "'/' is not allowed in authority"),
                arguments("/x", "'/' is not allowed in authority"),
                // 14: percent-encoding
                arguments("%61llowed.test:443", "percent-encoding is not allowed in host"),
                arguments("allowed%2etest:443", "percent-encoding is not allowed in host"),
                // 18: bracketed non-IPv6
                arguments("[allowed.test]:443", "brackets must contain an ipv6 address"),
                arguments("[[allowed.test]]:443", "nested brackets"),
                arguments("[127.0.0.1]:443", "brackets must contain an ipv6 address"),
                arguments("[::1]443", "unexpected characters after ']'"),
                arguments("[::1:443", "missing ']' after ipv6 address"),
                arguments("allowed.test]:443", "brackets are only allowed around an ipv6 address"),
                // 19: unbracketed IPv6
                arguments("2001:db8::1:443", "ipv6 address must be in brackets"),
                arguments("::1", "ipv6 address must be in brackets"),
                // 20: port forms
                arguments("allowed.test:443:443", "more than one ':' in authority"),
                arguments("allowed.test:0443", "port has leading zeros"),
                arguments("allowed.test:00", "port has leading zeros"),
                arguments("allowed.test:0", "port out of range"),
                arguments("allowed.test:65536", "port out of range"),
                arguments("allowed.test:99999999999", "port out of range"),
                arguments("allowed.test:-1", "port is not a decimal number"),
                arguments("allowed.test:+443", "port is not a decimal number"),
                arguments("allowed.test:https", "port is not a decimal number"),
                arguments("allowed.test:443.allowed.com", "port is not a decimal number"),
                arguments("allowed.test:\u0664\u0664\u0663", "port is not a decimal number"),
                arguments("allowed.test:", "empty port"),
                arguments(":443", "empty host"),
                arguments("allowed.test", "port is required"),
                arguments("[::1]", "port is required"),
                arguments("", "empty authority"),
                // 31, 33 neighbours: numeric last label that is not an inet_aton address
                arguments("1.2.3.4.5:443", "invalid ipv4 address"),
                arguments("256.1.1.1:443", "invalid ipv4 address"),
                arguments("1.256.1.1:443", "invalid ipv4 address"),
                arguments("1.2.65536:443", "invalid ipv4 address"),
                arguments("4294967296:443", "invalid ipv4 address"),
                arguments("08.0.0.1:443", "invalid ipv4 address"),
                arguments("0x:443", "invalid ipv4 address"),
                arguments("0x1g.0.0.1:443", "invalid ipv4 address"),
                arguments("allowed.123:443", "invalid ipv4 address"),
                arguments("allowed.0x10:443", "invalid ipv4 address"),
                // 36: zone ids
                arguments("[fe80::1%25eth0]:443", "ipv6 zone id is not allowed"),
                arguments("[fe80::1%eth0]:443", "ipv6 zone id is not allowed"),
                // malformed IPv6 inside brackets
                arguments("[1::2::3]:443", "brackets must contain an ipv6 address"),
                arguments("[:::]:443", "brackets must contain an ipv6 address"),
                arguments("[1:2:3:4:5:6:7:8:9]:443", "brackets must contain an ipv6 address"),
                arguments("[1::2:3:4:5:6:7:8]:443", "brackets must contain an ipv6 address"),
                arguments("[12345::1]:443", "brackets must contain an ipv6 address"),
                arguments("[::ffff:127.0.0.01]:443", "brackets must contain an ipv6 address"),
                arguments("[::127.0.0.1:1]:443", "brackets must contain an ipv6 address"),
                arguments("[]:443", "brackets must contain an ipv6 address"),
                // label alphabet and STD3 hyphen rule
                arguments("-allowed.test:443", "label starts or ends with '-'"),
                arguments("allowed-.test:443", "label starts or ends with '-'"),
                arguments("allow*ed.test:443", "invalid character in host name"),
                arguments("allowed.test,evil.test:443", "invalid character in host name"),
                arguments("a\u00a0b.test:443", "invalid character in host name"),
                // nameprep maps U+2488 to "1.", which would forge a label boundary
                arguments("evil\u2488test:443", "invalid internationalised host name"));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("rejectedConnectTargets")
    void connectTargetIsRejected(String input, String reason) {
        MalformedTargetException e =
                assertThrows(MalformedTargetException.class, () -> Authorities.parseConnectTarget(input));
        assertEquals(reason, e.getMessage());
    }

    static Stream<Arguments> authorities() {
        return Stream.of(
                arguments("allowed.test", 80, new Target("allowed.test", HostKind.DNS, 80)),
                arguments("ALLOWED.TEST", 80, new Target("allowed.test", HostKind.DNS, 80)),
                arguments("allowed.test:8080", 80, new Target("allowed.test", HostKind.DNS, 8080)),
                arguments("allowed.test.", 443, new Target("allowed.test", HostKind.DNS, 443)),
                arguments("127.1", 80, new Target("127.0.0.1", HostKind.IPV4, 80)),
                arguments("[::1]", 80, new Target("::1", HostKind.IPV6, 80)),
                arguments("[::1]:8080", 80, new Target("::1", HostKind.IPV6, 8080)));
    }

    @ParameterizedTest(name = "[{index}] {0} (default {1})")
    @MethodSource("authorities")
    void authorityUsesDefaultPortOnlyWhenNoneIsWritten(String input, int defaultPort, Target expected)
            throws Exception {
        assertEquals(expected, Authorities.parseAuthority(input, defaultPort));
    }

    static Stream<Arguments> rejectedAuthorities() {
        return Stream.of(
                arguments("allowed.test:", "empty port"),
                arguments("[::1]:", "empty port"),
                arguments("allowed.test:80@evil.test", "userinfo is not allowed"),
                arguments("allowed.test/path", "'/' is not allowed in authority"),
                arguments("allowed.test, evil.test", "space in authority"),
                arguments("", "empty authority"));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("rejectedAuthorities")
    void authorityIsRejected(String input, String reason) {
        MalformedTargetException e =
                assertThrows(MalformedTargetException.class, () -> Authorities.parseAuthority(input, 80));
        assertEquals(reason, e.getMessage());
    }

    @Test
    void nullIsRejectedLikeEmpty() {
        assertThrows(MalformedTargetException.class, () -> Authorities.parseConnectTarget(null));
        assertThrows(MalformedTargetException.class, () -> Authorities.parseAuthority(null, 80));
    }

    @Test
    void invalidDefaultPortIsAProgrammingError() {
        assertThrows(IllegalArgumentException.class, () -> Authorities.parseAuthority("allowed.test", 0));
    }

    @Test
    void messagesNeverEchoTheInput() {
        String secretish = "x".repeat(40) + "\u0000" + "y".repeat(200) + ".test:443";
        MalformedTargetException e =
                assertThrows(MalformedTargetException.class, () -> Authorities.parseConnectTarget(secretish));
        assertFalse(e.getMessage().contains("xxxx"), e.getMessage());
        assertTrue(e.getMessage().length() <= 64, e.getMessage());
    }

    static Stream<Arguments> literalAddresses() {
        return Stream.of(
                arguments("127.1:443", "127.0.0.1", Inet4Address.class),
                arguments("[2001:0db8::1]:443", "2001:db8:0:0:0:0:0:1", Inet6Address.class),
                // Java turns an IPv4-mapped address into the IPv4 address it dials
                arguments("[::ffff:169.254.169.254]:443", "169.254.169.254", Inet4Address.class));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("literalAddresses")
    void literalAddressIsBuiltFromTheCanonicalText(String input, String address, Class<?> type) throws Exception {
        InetAddress actual = Authorities.literalAddress(Authorities.parseConnectTarget(input));
        assertEquals(address, actual.getHostAddress());
        assertEquals(type, actual.getClass());
    }

    @Test
    void literalAddressRefusesDnsNames() throws Exception {
        Target name = Authorities.parseConnectTarget("allowed.test:443");
        assertThrows(IllegalArgumentException.class, () -> Authorities.literalAddress(name));
    }

    /** A 253-character name of 63-character labels. */
    private static String name253() {
        String label = "a".repeat(63);
        String name = label + "." + label + "." + label + "." + "b".repeat(61);
        assertEquals(253, name.length());
        return name;
    }
}
