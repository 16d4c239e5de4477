package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NetworkPolicyTest {
    /** The corpus's test policy plus the entries the decision cases need. */
    private static final NetworkPolicy POLICY = policy(
            List.of(
                    "allowed.test",
                    "api.allowed.test",
                    "*.wild.test",
                    "*.allowed.test",
                    "upstream.test:8443",
                    "[2001:db8::1]:443",
                    "100.64.0.1"),
            List.of("internal.allowed.test", "[::1]", "*.private.wild.test"),
            Map.of("pinned.test", List.of("127.0.0.1", "::1")));

    static Stream<Arguments> decisions() {
        String allow = "network.allow";
        String deny = "network.deny";
        return Stream.of(
                // 1
                arguments("ALLOWED.TEST:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[0]=allowed.test"),
                arguments("api.allowed.test:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[1]=api.allowed.test"),
                // 2: an implicit subdomain is only allowed here through the explicit wildcard
                arguments("www.allowed.test:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[3]=*.allowed.test"),
                // 3, 4, 5
                arguments("evilallowed.test:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                arguments("notwild.test:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                arguments("allowed.test.evil.test:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                arguments("wild.test:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                // 6, 15
                arguments("a.b.c.wild.test:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[2]=*.wild.test"),
                arguments("a_b.wild.test:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[2]=*.wild.test"),
                // 7: IP literals never match name entries
                arguments("127.0.0.1:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                // 16
                arguments("\u0430llowed.test:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                // 19: canonical IPv6 comparison, for allow and deny
                arguments(
                        "[2001:0DB8:0000::0001]:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[5]=[2001:db8::1]:443"),
                arguments("[0:0:0:0:0:0:0:1]:443", Verdict.DENY, Reasons.DENIED_BY_RULE, deny + "[1]=[::1]"),
                // 21, 45: port-scoped entries, and non-TLS ports of allowed hosts
                arguments("upstream.test:8443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[4]=upstream.test:8443"),
                arguments("upstream.test:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                arguments("allowed.test:8443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                arguments("allowed.test:22", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                arguments("allowed.test:6379", Verdict.DENY, Reasons.NOT_ALLOWED, "-"),
                // 22: deny beats allow, in any spelling
                arguments(
                        "internal.allowed.test:443",
                        Verdict.DENY,
                        Reasons.DENIED_BY_RULE,
                        deny + "[0]=internal.allowed.test"),
                arguments(
                        "INTERNAL.allowed.test.:443",
                        Verdict.DENY,
                        Reasons.DENIED_BY_RULE,
                        deny + "[0]=internal.allowed.test"),
                arguments(
                        "x.private.wild.test:443",
                        Verdict.DENY,
                        Reasons.DENIED_BY_RULE,
                        deny + "[2]=*.private.wild.test"),
                // a deny entry without a port denies every port
                arguments(
                        "internal.allowed.test:8443",
                        Verdict.DENY,
                        Reasons.DENIED_BY_RULE,
                        deny + "[0]=internal.allowed.test"),
                // 34: an IP allowed explicitly, in any spelling
                arguments("100.64.0.1:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[6]=100.64.0.1"),
                arguments("100.64.1:443", Verdict.ALLOW, Reasons.ALLOWED, allow + "[6]=100.64.0.1"),
                arguments("100.64.0.2:443", Verdict.DENY, Reasons.NOT_ALLOWED, "-"));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1} {2}")
    @MethodSource("decisions")
    void decisionCarriesVerdictReasonAndRule(String target, Verdict verdict, String reason, String rule)
            throws Exception {
        Decision decision = POLICY.decide(Authorities.parseConnectTarget(target), 443);
        assertEquals(new Decision(verdict, reason, rule), decision);
    }

    @Test
    void plainHttpToANonDefaultPortIsDenied() throws Exception {
        // 29: the default port for plain HTTP is 80; 8080 and 443 need their own entries.
        assertEquals(
                Decision.allow(Reasons.ALLOWED, "network.allow[0]=allowed.test"),
                POLICY.decide(Authorities.parseAuthority("allowed.test", 80), 80));
        assertEquals(
                Decision.deny(Reasons.NOT_ALLOWED, "-"),
                POLICY.decide(Authorities.parseAuthority("allowed.test:8080", 80), 80));
        assertEquals(
                Decision.deny(Reasons.NOT_ALLOWED, "-"),
                POLICY.decide(Authorities.parseAuthority("allowed.test:443", 80), 80));
    }

    static Stream<String> anyTarget() {
        return Stream.of("allowed.test:443", "127.0.0.1:443", "[::1]:443", "internal.allowed.test:443");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("anyTarget")
    void emptyAllowListMeansNoNetwork(String target) throws Exception {
        // 24: empty is "nothing", never "everything"; deny entries do not change that.
        Decision expected = Decision.deny(Reasons.NO_NETWORK, "-");
        Target parsed = Authorities.parseConnectTarget(target);
        assertEquals(expected, NetworkPolicy.none().decide(parsed, 443));
        assertEquals(
                expected,
                policy(List.of(), List.of("internal.allowed.test"), Map.of()).decide(parsed, 443));
    }

    @Test
    void firstMatchingEntryIsTheRule() throws Exception {
        NetworkPolicy overlapping = policy(List.of("*.wild.test", "a.wild.test"), List.of(), Map.of());
        assertEquals(
                Decision.allow(Reasons.ALLOWED, "network.allow[0]=*.wild.test"),
                overlapping.decide(Authorities.parseConnectTarget("a.wild.test:443"), 443));
    }

    static Stream<Arguments> explicitlyAllowed() {
        return Stream.of(
                // pinned by resolve, for that host only
                arguments("pinned.test", "127.0.0.1", true),
                arguments("pinned.test", "::1", true),
                arguments("pinned.test", "127.0.0.2", false),
                arguments("allowed.test", "127.0.0.1", false),
                // an allow entry of kind IP, any port
                arguments("anything.test", "100.64.0.1", true),
                arguments("anything.test", "2001:db8::1", true),
                arguments("anything.test", "2001:db8::2", false),
                // deny entries and name entries never count
                arguments("anything.test", "::1", false),
                // an IPv4-mapped address is the IPv4 endpoint it dials
                arguments("anything.test", "::ffff:100.64.0.1", true));
    }

    @ParameterizedTest(name = "[{index}] {0} {1} -> {2}")
    @MethodSource("explicitlyAllowed")
    void explicitlyAllowsPinnedAndListedAddresses(String host, String address, boolean expected) throws Exception {
        assertEquals(expected, POLICY.explicitlyAllows(host, InetAddress.getByName(address)));
    }

    @Test
    void mappedIpv6EntryAllowsItsIpv4Endpoint() throws Exception {
        NetworkPolicy mapped = policy(List.of("[::ffff:10.0.0.1]"), List.of(), Map.of());
        assertEquals(true, mapped.explicitlyAllows("x.test", InetAddress.getByName("10.0.0.1")));
        assertEquals(false, mapped.explicitlyAllows("x.test", InetAddress.getByName("10.0.0.2")));
    }

    @Test
    void mappedInet6AddressIsTheIpv4EndpointToo() throws Exception {
        // Inet6Address.getByAddress keeps the mapped form that InetAddress.getByName would unmap.
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xFF;
        mapped[11] = (byte) 0xFF;
        mapped[12] = 100;
        mapped[13] = 64;
        mapped[15] = 1;
        assertEquals(true, POLICY.explicitlyAllows("anything.test", Inet6Address.getByAddress(null, mapped, -1)));
        mapped[15] = 2;
        assertEquals(false, POLICY.explicitlyAllows("anything.test", Inet6Address.getByAddress(null, mapped, -1)));
    }

    @Test
    void pinnedReturnsAddressesOrNothing() throws Exception {
        assertEquals(
                List.of(InetAddress.getByName("127.0.0.1"), InetAddress.getByName("::1")),
                POLICY.pinned("pinned.test"));
        assertEquals(List.of(), POLICY.pinned("allowed.test"));
    }

    @Test
    void recordCopiesItsInputs() throws Exception {
        List<HostPattern> allow = new ArrayList<>(List.of(HostPattern.parse("allowed.test")));
        List<InetAddress> addresses = new ArrayList<>(List.of(InetAddress.getByName("127.0.0.1")));
        NetworkPolicy copy = new NetworkPolicy(allow, List.of(), Map.of("pinned.test", addresses));
        allow.clear();
        addresses.clear();
        assertEquals(1, copy.allow().size());
        assertEquals(1, copy.pinned("pinned.test").size());
        assertThrows(
                UnsupportedOperationException.class,
                () -> copy.pinned("pinned.test").clear());
    }

    private static NetworkPolicy policy(List<String> allow, List<String> deny, Map<String, List<String>> resolve) {
        try {
            List<HostPattern> allowPatterns = new ArrayList<>();
            for (String text : allow) {
                allowPatterns.add(HostPattern.parse(text));
            }
            List<HostPattern> denyPatterns = new ArrayList<>();
            for (String text : deny) {
                denyPatterns.add(HostPattern.parse(text));
            }
            Map<String, List<InetAddress>> pinned = new HashMap<>();
            for (Map.Entry<String, List<String>> entry : resolve.entrySet()) {
                List<InetAddress> addresses = new ArrayList<>();
                for (String literal : entry.getValue()) {
                    addresses.add(InetAddress.getByName(literal));
                }
                pinned.put(entry.getKey(), addresses);
            }
            return new NetworkPolicy(allowPatterns, denyPatterns, pinned);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
