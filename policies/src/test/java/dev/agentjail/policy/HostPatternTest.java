package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class HostPatternTest {
    private static final OptionalInt ANY = OptionalInt.empty();

    static Stream<Arguments> accepted() {
        return Stream.of(
                arguments("api.anthropic.com", HostPattern.Kind.EXACT, "api.anthropic.com", ANY),
                arguments("API.Anthropic.COM.", HostPattern.Kind.EXACT, "api.anthropic.com", ANY),
                arguments("localhost", HostPattern.Kind.EXACT, "localhost", ANY),
                arguments("upstream.test:8443", HostPattern.Kind.EXACT, "upstream.test", OptionalInt.of(8443)),
                arguments("*.githubusercontent.com", HostPattern.Kind.WILDCARD, "githubusercontent.com", ANY),
                arguments("*.Wild.Test.", HostPattern.Kind.WILDCARD, "wild.test", ANY),
                arguments("*.wild.test:8443", HostPattern.Kind.WILDCARD, "wild.test", OptionalInt.of(8443)),
                arguments("*.a_b.test", HostPattern.Kind.WILDCARD, "a_b.test", ANY),
                arguments("*.xn--bcher-kva.test", HostPattern.Kind.WILDCARD, "xn--bcher-kva.test", ANY),
                arguments("192.0.2.1", HostPattern.Kind.IP, "192.0.2.1", ANY),
                arguments("127.1:8080", HostPattern.Kind.IP, "127.0.0.1", OptionalInt.of(8080)),
                arguments("[2001:DB8:0::1]:443", HostPattern.Kind.IP, "2001:db8::1", OptionalInt.of(443)),
                arguments("[::ffff:7f00:1]", HostPattern.Kind.IP, "::ffff:127.0.0.1", ANY));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("accepted")
    void patternIsParsedAndCanonicalised(String text, HostPattern.Kind kind, String host, OptionalInt port)
            throws Exception {
        assertEquals(new HostPattern(text, kind, host, port), HostPattern.parse(text));
    }

    /** Corpus case 23 and friends: over-broad or malformed entries fail with a reason. */
    static Stream<Arguments> rejected() {
        return Stream.of(
                arguments("*", "'*' alone would match every host"),
                arguments("*:443", "'*' alone would match every host"),
                arguments("*.", "'*.' needs a domain after it"),
                arguments("*.:443", "'*.' needs a domain after it"),
                arguments("*.*.test", "only one '*', as a leading '*.', is allowed"),
                arguments("*.a*.test", "only one '*', as a leading '*.', is allowed"),
                arguments("api.*.test", "'*' is only allowed as a leading '*.'"),
                arguments("ex*ample.test", "'*' is only allowed as a leading '*.'"),
                arguments("*example.test", "'*' is only allowed as a leading '*.'"),
                arguments("**.example.test", "'*' is only allowed as a leading '*.'"),
                arguments("example.*", "'*' is only allowed as a leading '*.'"),
                arguments("*.com", "wildcard over a single label is too broad"),
                arguments("*.test", "wildcard over a single label is too broad"),
                arguments("*.test.", "wildcard over a single label is too broad"),
                arguments("*.com:443", "wildcard over a single label is too broad"),
                // case 7: wildcards over IP literals
                arguments("*.0.0.1", "a wildcard cannot cover an ip address"),
                arguments("*.[::1]", "a wildcard cannot cover an ip address"),
                arguments("*..test", "empty label in host"),
                // case 16: entries are ASCII; the reason says what to write instead
                arguments("\u00e9x\u00e4mple.com", "non-ascii host; write it in punycode: xn--xmple-gra7a.com"),
                arguments("*.b\u00fccher.test:8443", "non-ascii host; write it in punycode: *.xn--bcher-kva.test:8443"),
                arguments("\u2488\u2488.test", "non-ascii host; write it in punycode (xn--...)"),
                arguments("", "empty pattern"),
                arguments("allowed.test:0443", "port has leading zeros"),
                arguments("allowed.test:", "empty port"),
                arguments("::1", "ipv6 address must be in brackets"),
                arguments("[allowed.test]", "brackets must contain an ipv6 address"),
                arguments("[fe80::1%25eth0]", "ipv6 zone id is not allowed"),
                arguments("user@allowed.test", "userinfo is not allowed"),
                arguments("http://allowed.test", "'/' is not allowed in authority"),
                arguments("allowed.test/", "'/' is not allowed in authority"),
                arguments(" allowed.test", "space in authority"),
                arguments("1.2.3.4.5", "invalid ipv4 address"));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("rejected")
    void patternIsRejectedWithAReason(String text, String reason) {
        MalformedTargetException e = assertThrows(MalformedTargetException.class, () -> HostPattern.parse(text));
        assertEquals(reason, e.getMessage());
    }

    @Test
    void nullPatternIsRejected() {
        assertThrows(MalformedTargetException.class, () -> HostPattern.parse(null));
    }

    /** Pattern, CONNECT target, whether it matches with 443 as the default port. Numbers are corpus cases. */
    static Stream<Arguments> matching() {
        return Stream.of(
                // 1: case-insensitive on both sides, trailing dot on both sides
                arguments("allowed.test", "ALLOWED.TEST:443", true),
                arguments("ALLOWED.test", "allowed.test:443", true),
                arguments("allowed.test", "allowed.test.:443", true),
                arguments("allowed.test.", "allowed.test:443", true),
                // 2: no implicit subdomains
                arguments("allowed.test", "www.allowed.test:443", false),
                // 3: suffix confusion
                arguments("allowed.test", "evilallowed.test:443", false),
                arguments("*.wild.test", "notwild.test:443", false),
                arguments("*.wild.test", "evil-wild.test:443", false),
                // 4: allowed name as a left-hand label
                arguments("allowed.test", "allowed.test.evil.test:443", false),
                arguments("api.allowed.test", "api.allowed.test.evil.test:443", false),
                arguments("*.wild.test", "x.wild.test.evil.test:443", false),
                // 5: wildcard never matches the apex
                arguments("*.wild.test", "wild.test:443", false),
                arguments("*.wild.test", "wild.test.:443", false),
                // 6: wildcard depth is "any"
                arguments("*.wild.test", "a.wild.test:443", true),
                arguments("*.wild.test", "a.b.c.wild.test:443", true),
                arguments("*.wild.test", "A.B.WILD.TEST.:443", true),
                // 15: underscore labels are ordinary labels
                arguments("*.wild.test", "a_b.wild.test:443", true),
                // 16: a homograph is a different (punycode) name
                arguments("allowed.test", "\u0430llowed.test:443", false),
                arguments("xn--bcher-kva.test", "b\u00fccher.test:443", true),
                // 7: wildcards and DNS patterns never match IP literals
                arguments("*.wild.test", "127.0.0.1:443", false),
                arguments("localhost", "127.0.0.1:443", false),
                arguments("localhost", "[::1]:443", false),
                // 19: IPs compare canonically
                arguments("[2001:db8::1]:443", "[2001:0DB8:0000::0001]:443", true),
                arguments("[::1]", "[0:0:0:0:0:0:0:1]:443", true),
                arguments("[::ffff:127.0.0.1]", "[::ffff:7f00:1]:443", true),
                arguments("127.0.0.1", "2130706433:443", true),
                arguments("127.0.0.1", "0x7f.1:443", true),
                arguments("192.0.2.1", "192.0.2.2:443", false),
                // different families are different canonical addresses
                arguments("127.0.0.1", "[::ffff:127.0.0.1]:443", false),
                arguments("[::ffff:127.0.0.1]", "127.0.0.1:443", false),
                // IP patterns never match names, even ones that look like addresses after the fact
                arguments("127.0.0.1", "localhost:443", false),
                // 21, 29, 45: ports; no port in the pattern means the default port only
                arguments("allowed.test", "allowed.test:8443", false),
                arguments("allowed.test", "allowed.test:22", false),
                arguments("allowed.test:443", "allowed.test:443", true),
                arguments("allowed.test:443", "allowed.test:8443", false),
                arguments("allowed.test:8443", "allowed.test:8443", true),
                arguments("allowed.test:8443", "allowed.test:443", false),
                arguments("*.wild.test:8443", "a.wild.test:8443", true),
                arguments("*.wild.test:8443", "a.wild.test:443", false),
                arguments("[::1]:8080", "[::1]:8080", true),
                arguments("[::1]:8080", "[::1]:443", false));
    }

    @ParameterizedTest(name = "[{index}] {0} vs {1} -> {2}")
    @MethodSource("matching")
    void patternMatchesCanonicalTargets(String pattern, String target, boolean matches) throws Exception {
        assertEquals(matches, HostPattern.parse(pattern).matches(Authorities.parseConnectTarget(target), 443));
    }

    static Stream<Arguments> defaultPorts() {
        return Stream.of(
                // 29: plain HTTP: a pattern without a port stands for 80 there
                arguments("allowed.test", "allowed.test", 80, true),
                arguments("allowed.test", "allowed.test:8080", 80, false),
                arguments("allowed.test", "allowed.test:443", 80, false),
                arguments("allowed.test:443", "allowed.test:443", 80, true),
                arguments("allowed.test:80", "allowed.test", 80, true));
    }

    @ParameterizedTest(name = "[{index}] {0} vs {1} (default {2}) -> {3}")
    @MethodSource("defaultPorts")
    void patternWithoutPortMeansTheDefaultPort(String pattern, String authority, int defaultPort, boolean matches)
            throws Exception {
        Target target = Authorities.parseAuthority(authority, defaultPort);
        assertEquals(matches, HostPattern.parse(pattern).matches(target, defaultPort));
    }

    @Test
    void constructorRefusesAnInvalidPort() {
        assertThrows(
                IllegalArgumentException.class,
                () -> new HostPattern("x.test:0", HostPattern.Kind.EXACT, "x.test", OptionalInt.of(0)));
    }
}
