package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code network.tunnel}: which allowed CONNECTs are relayed without interception. */
class NetworkTunnelTest {
    private static final String POLICY = """
            version: 1
            network:
              allow: [pinned.test, "*.mtls.test", other.test, "upstream.test:8443"]
              tunnel:
                - pinned.test
                - "*.mtls.test"
                - "upstream.test:8443"
                - "[2001:db8::1]"
                - not-allowed.test
            """;

    static Stream<Arguments> targets() {
        return Stream.of(
                arguments("pinned.test:443", Optional.of("network.tunnel[0]=pinned.test")),
                arguments("PINNED.test.:443", Optional.of("network.tunnel[0]=pinned.test")),
                arguments("pinned.test:8443", Optional.empty()),
                arguments("a.b.mtls.test:443", Optional.of("network.tunnel[1]=*.mtls.test")),
                arguments("mtls.test:443", Optional.empty()),
                arguments("upstream.test:8443", Optional.of("network.tunnel[2]=upstream.test:8443")),
                arguments("upstream.test:443", Optional.empty()),
                arguments("[2001:0db8::0001]:443", Optional.of("network.tunnel[3]=[2001:db8::1]")),
                arguments("other.test:443", Optional.empty()),
                arguments("not-allowed.test:443", Optional.of("network.tunnel[4]=not-allowed.test")));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("targets")
    void tunnelEntriesMatchLikeAllowEntries(String connect, Optional<String> rule) throws Exception {
        NetworkPolicy network = PolicyLoader.parse(POLICY, "p.yaml").network();
        Target target = Authorities.parseConnectTarget(connect);
        assertEquals(rule, network.tunnelRule(target, 443));
        assertEquals(rule.isPresent(), network.tunnelled(target, 443));
    }

    @Test
    void aTunnelEntryAllowsNothingByItself() throws Exception {
        NetworkPolicy network = PolicyLoader.parse(POLICY, "p.yaml").network();
        Target target = Authorities.parseConnectTarget("not-allowed.test:443");
        assertEquals(true, network.tunnelled(target, 443));
        assertEquals(Decision.deny(Reasons.NOT_ALLOWED, "-"), network.decide(target, 443));
        NetworkPolicy tunnelOnly = PolicyLoader.parse("version: 1\nnetwork:\n  tunnel: [pinned.test]\n", "p.yaml")
                .network();
        assertEquals(
                Decision.deny(Reasons.NO_NETWORK, "-"),
                tunnelOnly.decide(Authorities.parseConnectTarget("pinned.test:443"), 443));
    }

    @Test
    void withoutTunnelEntriesNothingIsTunnelled() throws Exception {
        NetworkPolicy network = new NetworkPolicy(List.of(HostPattern.parse("a.test")), List.of(), Map.of());
        assertEquals(List.of(), network.tunnel());
        assertEquals(false, network.tunnelled(Authorities.parseConnectTarget("a.test:443"), 443));
        assertEquals(List.of(), NetworkPolicy.none().tunnel());
        assertEquals(
                NetworkPolicy.none(),
                PolicyLoader.parse("version: 1\nnetwork: {tunnel: []}\n", "p.yaml")
                        .network());
    }

    static Stream<Arguments> badTunnels() {
        return Stream.of(
                arguments(
                        "  tunel: [a.test]\n", "p.yaml:3: network.tunel: unknown key 'tunel' (did you mean 'tunnel'?)"),
                arguments("  tunnel: a.test\n", "p.yaml:3: network.tunnel: expected a list, got 'a.test'"),
                arguments(
                        "  tunnel:\n    - a.test\n    - \"*\"\n",
                        "p.yaml:5: network.tunnel[1]: invalid host pattern '*': '*' alone would match every host"),
                arguments(
                        "  tunnel: [\"*.com\"]\n",
                        "p.yaml:3: network.tunnel[0]: invalid host pattern '*.com': wildcard over a single label is"
                                + " too broad"),
                arguments(
                        "  tunnel: [\"a.*.test\"]\n",
                        "p.yaml:3: network.tunnel[0]: invalid host pattern 'a.*.test': '*' is only allowed as a"
                                + " leading '*.'"),
                arguments("  tunnel: [{a: b}]\n", "p.yaml:3: network.tunnel[0]: expected a string, got a mapping"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badTunnels")
    void badTunnelIsRefusedWithFileLineAndKey(String section, String message) {
        PolicyException e = assertThrows(
                PolicyException.class, () -> PolicyLoader.parse("version: 1\nnetwork:\n" + section, "p.yaml"));
        assertEquals(message, e.getMessage());
    }
}
