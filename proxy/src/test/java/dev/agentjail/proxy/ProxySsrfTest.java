package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.CorpusProxy.connect;
import static dev.agentjail.proxy.testing.CorpusProxy.get;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.CorpusProxy;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Corpus section 2 through a real proxy. IP literals in any spelling are canonicalised and never match a name entry;
 * a name the policy allows is still refused when it resolves to a non-public address, and nothing is dialled. The
 * recorder listens on 127.0.0.1 at the port the {@code *.rebind.test} entry allows, so a guard that let a loopback
 * answer through would reach it.
 */
class ProxySsrfTest {
    private CorpusProxy env;

    @BeforeEach
    void start() throws Exception {
        env = CorpusProxy.start();
    }

    @AfterEach
    void stop() throws Exception {
        env.close();
    }

    static Stream<Arguments> literals() {
        return Stream.of(
                lit("31", "127.0.0.1", "127.0.0.1"),
                lit("31", "127.1", "127.0.0.1"),
                lit("31", "127.0.1", "127.0.0.1"),
                lit("31", "0177.0.0.1", "127.0.0.1"),
                lit("31", "0x7f.0.0.1", "127.0.0.1"),
                lit("31", "0x7f000001", "127.0.0.1"),
                lit("31", "2130706433", "127.0.0.1"),
                lit("31", "017700000001", "127.0.0.1"),
                lit("31", "127.127.127.127", "127.127.127.127"),
                lit("31", "127.255.255.255", "127.255.255.255"),
                lit("31", "localhost", "localhost"),
                lit("31", "localhost.", "localhost"),
                lit("31", "LOCALHOST", "localhost"),
                lit("31", "[::1]", "::1"),
                lit("31", "[0:0:0:0:0:0:0:1]", "::1"),
                lit("31", "[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
                lit("31", "[::ffff:7f00:1]", "::ffff:127.0.0.1"),
                lit("31", "[::127.0.0.1]", "::7f00:1"),
                lit("32", "0.0.0.0", "0.0.0.0"),
                lit("32", "0", "0.0.0.0"),
                lit("32", "[::]", "::"),
                lit("32", "[0000::1]", "::1"),
                lit("33", "169.254.169.254", "169.254.169.254"),
                lit("33", "2852039166", "169.254.169.254"),
                lit("33", "0251.254.169.254", "169.254.169.254"),
                lit("33", "[::ffff:169.254.169.254]", "::ffff:169.254.169.254"),
                lit("33", "[fd00:ec2::254]", "fd00:ec2::254"),
                lit("33", "169.254.170.2", "169.254.170.2"),
                lit("33", "100.100.100.200", "100.100.100.200"),
                lit("33", "168.63.129.16", "168.63.129.16"),
                lit("34", "10.0.0.1", "10.0.0.1"),
                lit("34", "172.16.0.1", "172.16.0.1"),
                lit("34", "192.168.0.1", "192.168.0.1"),
                lit("34", "100.64.0.1", "100.64.0.1"),
                lit("34", "100.127.255.254", "100.127.255.254"),
                lit("34", "198.18.0.1", "198.18.0.1"),
                lit("34", "192.0.0.1", "192.0.0.1"),
                lit("34", "192.0.2.1", "192.0.2.1"),
                lit("34", "224.0.0.1", "224.0.0.1"),
                lit("34", "240.0.0.1", "240.0.0.1"),
                lit("34", "255.255.255.255", "255.255.255.255"),
                lit("34", "[ff02::2]", "ff02::2"),
                lit("34", "[fe80::1]", "fe80::1"),
                lit("34", "[fc00::1]", "fc00::1"),
                lit("34", "[fec0::1]", "fec0::1"));
    }

    @ParameterizedTest(name = "{0} CONNECT {1}:443")
    @MethodSource("literals")
    void internalAddressLiteralsAreDeniedAsTheirCanonicalForm(String caseNo, String spelling, String canonical)
            throws Exception {
        RawResponse response = env.exchange(connect(spelling + ":443"));

        assertEquals(403, response.status(), response.statusLine());
        assertEquals("not-in-allowlist", response.header(ProxyReasons.HEADER));
        env.upstream.assertUntouched();
        assertEquals(List.of(), env.dns.queries());
        AuditRecord record = env.onlyRecord();
        assertEquals("deny", record.decision());
        assertEquals(canonical, record.host());
    }

    @ParameterizedTest(name = "36 CONNECT {0}")
    @MethodSource
    void zoneIdsAreRefused(String target) throws Exception {
        RawResponse response = env.exchange(connect(target));

        assertEquals(400, response.status());
        assertEquals("bad-target", response.header(ProxyReasons.HEADER));
        env.upstream.assertUntouched();
        assertEquals("bad-target", env.onlyRecord().reason());
    }

    static Stream<String> zoneIdsAreRefused() {
        return Stream.of("[fe80::1%25eth0]:443", "[fe80::1%eth0]:443", "[::1%lo]:443");
    }

    static Stream<Arguments> internalAnswers() {
        return Stream.of(
                Arguments.of("31/37 loopback answer", "127.0.0.1", "ssrf-loopback"),
                Arguments.of("39 AAAA loopback answer", "::1", "ssrf-loopback"),
                Arguments.of("31 IPv4-mapped loopback answer", "::ffff:127.0.0.1", "ssrf-loopback"),
                Arguments.of("32 unspecified answer", "0.0.0.0", "ssrf-unspecified"),
                Arguments.of("33/37 metadata answer", "169.254.169.254", "ssrf-link-local"),
                Arguments.of("33 Azure platform answer", "168.63.129.16", "ssrf-metadata"),
                Arguments.of("33 IMDS over IPv6 answer", "fd00:ec2::254", "ssrf-metadata"),
                Arguments.of("33 Alibaba metadata answer", "100.100.100.200", "ssrf-cgnat"),
                Arguments.of("34 private answer", "10.0.0.1", "ssrf-private"),
                Arguments.of("34 unique-local answer", "fc00::1", "ssrf-unique-local"));
    }

    @ParameterizedTest(name = "{0}: GET")
    @MethodSource("internalAnswers")
    void anAllowedNameResolvingInsideIsRefusedWithoutDialing(String name, String answer, String reason)
            throws Exception {
        env.dns.answer("inside.rebind.test", answer);

        RawResponse response = env.exchange(get("inside.rebind.test:" + env.upstream.port(), "/"));

        assertRefusedAfterLookup(response, "inside.rebind.test", reason);
    }

    @ParameterizedTest(name = "{0}: CONNECT")
    @MethodSource("internalAnswers")
    void anAllowedNameResolvingInsideGetsNoTunnel(String name, String answer, String reason) throws Exception {
        env.dns.answer("inside.rebind.test", answer);

        RawResponse response = env.exchange(connect("inside.rebind.test:" + env.upstream.port()));

        assertRefusedAfterLookup(response, "inside.rebind.test", reason);
    }

    @Test
    void case39EveryAnswerIsCheckedNotOnlyTheFirst() throws Exception {
        env.dns.answer("inside.rebind.test", "::1", "127.0.0.1");

        RawResponse response = env.exchange(get("inside.rebind.test:" + env.upstream.port(), "/"));

        assertRefusedAfterLookup(response, "inside.rebind.test", "ssrf-loopback");
    }

    @Test
    void case42AnUnresolvableAllowedNameIsABadGateway() throws Exception {
        RawResponse response = env.exchange(get("nx.wild.test", "/"));

        assertEquals(502, response.status());
        assertEquals("dns-failure", response.header(ProxyReasons.HEADER));
        assertEquals(List.of("nx.wild.test"), env.dns.queries());
        env.upstream.assertUntouched();
        AuditRecord record = env.onlyRecord();
        assertEquals("error", record.decision());
        assertEquals("dns-failure", record.reason());
        assertEquals("network.allow[2]=*.wild.test", record.rule());
    }

    @Test
    void aLoopbackAddressPinnedByResolveIsDialledWithoutDns() throws Exception {
        RawResponse response = env.exchange(get(env.up(), "/pinned"));

        assertEquals(200, response.status());
        assertEquals(RecordingUpstream.OK_BODY, response.body());
        assertEquals(1, env.upstream.connections());
        assertEquals(List.of(), env.dns.queries());
        AuditRecord record = env.onlyRecord();
        assertEquals("allow", record.decision());
        assertEquals("127.0.0.1", record.resolvedIp());
    }

    @Test
    void aPinnedAddressCountsOnlyForItsOwnName() throws Exception {
        // upstream.test is pinned to 127.0.0.1; another allowed name resolving there is still refused.
        env.dns.answer("other.rebind.test", "127.0.0.1");

        RawResponse response = env.exchange(get("other.rebind.test:" + env.upstream.port(), "/"));

        assertRefusedAfterLookup(response, "other.rebind.test", "ssrf-loopback");
    }

    @Test
    void case44RedirectsAreRelayedNotFollowed() throws Exception {
        try (CorpusProxy redirecting = CorpusProxy.start(RecordingUpstream.start(r ->
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n\r\n"))) {
            RawResponse response = redirecting.exchange(get(redirecting.up(), "/"));

            assertEquals(307, response.status());
            assertEquals("http://169.254.169.254/", response.header("Location"));
            assertEquals(1, redirecting.upstream.requests().size());
            assertEquals(1, redirecting.upstream.connections());
            assertEquals("allow", redirecting.onlyRecord().decision());
        }
    }

    private void assertRefusedAfterLookup(RawResponse response, String host, String reason) throws Exception {
        assertEquals(403, response.status(), response.statusLine());
        assertEquals(reason, response.header(ProxyReasons.HEADER));
        assertEquals(List.of(host), env.dns.queries(), "resolved once, by its canonical name");
        env.upstream.assertUntouched();
        AuditRecord record = env.onlyRecord();
        assertEquals("deny", record.decision());
        assertEquals(reason, record.reason());
        assertEquals(host, record.host());
    }

    private static Arguments lit(String caseNo, String spelling, String canonical) {
        return Arguments.of(caseNo, spelling, canonical);
    }
}
