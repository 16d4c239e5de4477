package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.CorpusProxy.WAIT;
import static dev.agentjail.proxy.testing.CorpusProxy.connect;
import static dev.agentjail.proxy.testing.CorpusProxy.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.CorpusProxy;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream.RecordedRequest;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Corpus section 1 through a real proxy: host canonicalisation and the allow/deny table. A refusal must carry its
 * reason in the response and in exactly one audit record, and must happen before any DNS query or upstream dial.
 */
class ProxyAllowlistTest {
    private CorpusProxy env;

    @BeforeEach
    void start() throws Exception {
        env = CorpusProxy.start();
    }

    @AfterEach
    void stop() throws Exception {
        env.close();
    }

    static Stream<Arguments> deniedByPolicy() {
        return Stream.of(
                denied("2 no implicit subdomain", connect("www.allowed.test:443"), "www.allowed.test", 443),
                denied("3 suffix without dot", connect("evilallowed.test:443"), "evilallowed.test", 443),
                denied("3 wildcard suffix without dot", connect("notwild.test:443"), "notwild.test", 443),
                denied(
                        "4 allowed name as left label",
                        connect("allowed.test.evil.test:443"),
                        "allowed.test.evil.test",
                        443),
                denied(
                        "4 allowed api name as left label",
                        connect("api.allowed.test.evil.test:443"),
                        "api.allowed.test.evil.test",
                        443),
                denied("5 wildcard never matches the apex", connect("wild.test:443"), "wild.test", 443),
                denied("7 IPv4 literal never matches a name", connect("127.0.0.1:443"), "127.0.0.1", 443),
                denied("7 IPv6 literal never matches a name", connect("[::1]:443"), "::1", 443),
                denied("21 port-scoped entry, other port", connect("upstream.test:443"), "upstream.test", 443),
                denied("29 plain HTTP to port 8080", get("allowed.test:8080", "/"), "allowed.test", 8080),
                denied("29 plain HTTP to port 443", get("allowed.test:443", "/"), "allowed.test", 443),
                denied("absolute-form to a name not listed", get("evil.test", "/"), "evil.test", 80),
                row(
                        "22 deny beats allow",
                        connect("internal.wild.test:443"),
                        403,
                        "denied-by-rule",
                        "deny",
                        "internal.wild.test",
                        443),
                row(
                        "22 deny beats allow, other spelling",
                        connect("INTERNAL.wild.test.:443"),
                        403,
                        "denied-by-rule",
                        "deny",
                        "internal.wild.test",
                        443));
    }

    static Stream<Arguments> rejectedAsMalformed() {
        String longHost =
                "a".repeat(63) + "." + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(54) + ".wild.test";
        return Stream.of(
                badTarget("9 double trailing dot", connect("allowed.test..:443")),
                badTarget("9 empty label", connect("allowed..test:443")),
                badTarget("9 leading dot", connect(".allowed.test:443")),
                malformed(
                        "10 NUL in the host",
                        connect("evil.test\u0000.allowed.test:443"),
                        400,
                        "malformed-request-line"),
                badTarget("10 percent-encoded CRLF", connect("evil.test%0d%0a.allowed.test:443")),
                badTarget("10 zone id payload", connect("[::ffff:127.0.0.1%25x.allowed.test]:443")),
                badTarget("11 host of 256 characters", connect(longHost + ":443")),
                badTarget("11 label of 64 characters", connect("a".repeat(64) + ".wild.test:443")),
                badTarget("12 userinfo", "GET http://allowed.test@evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                badTarget(
                        "12 userinfo with port",
                        "GET http://allowed.test:80@evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                badTarget(
                        "13 backslash before @",
                        "GET http://allowed.test\\@evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                malformed(
                        "13 # before @",
                        "GET http://evil.test#@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                        400,
                        "malformed-request-line"),
                malformed(
                        "13 ? before @",
                        "GET http://evil.test?@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                        400,
                        "bad-host-header"),
                badTarget(
                        "13 port, backslash and two @",
                        "GET http://allowed.test:80\\@@evil.test:80/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                malformed(
                        "13 spaces, & and #",
                        "GET http://1.1.1.1 &@2.2.2.2# @3.3.3.3/ HTTP/1.1\r\nHost: 1.1.1.1\r\n\r\n",
                        400,
                        "malformed-request-line"),
                badTarget(
                        "14 percent-encoded letter",
                        "GET http://%61llowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                badTarget(
                        "14 percent-encoded dot", "GET http://allowed%2etest/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                malformed(
                        "16 IDN homograph (non-ASCII refused)",
                        connect("\u00d0\u00b0llowed.test:443"),
                        400,
                        "malformed-request-line"),
                badTarget("18 bracketed name", connect("[allowed.test]:443")),
                badTarget("18 double-bracketed name", connect("[[allowed.test]]:443")),
                badTarget("19 unbracketed IPv6", connect("2001:db8::1:443")),
                badTarget("20 two ports", connect("allowed.test:443:443")),
                badTarget("20 leading zero port", connect("allowed.test:0443")),
                badTarget("20 port 0", connect("allowed.test:0")),
                badTarget("20 port 65536", connect("allowed.test:65536")),
                badTarget("20 negative port", connect("allowed.test:-1")),
                badTarget("20 named port", connect("allowed.test:https")),
                badTarget("20 empty port", connect("allowed.test:")),
                badTarget("20 port without host", connect(":443")),
                badTarget("20 CONNECT without port", connect("allowed.test")),
                malformed(
                        "25 Host differs from target",
                        "GET http://allowed.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
                        400,
                        "bad-host-header"),
                badTarget("26 origin-form", "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                malformed(
                        "27 two Host headers, same",
                        hosts("Host: allowed.test\r\nHost: allowed.test\r\n"),
                        400,
                        "bad-host-header"),
                malformed(
                        "27 two Host headers, different",
                        hosts("Host: allowed.test\r\nHost: evil.test\r\n"),
                        400,
                        "bad-host-header"),
                malformed("27 Host list", hosts("Host: allowed.test, evil.test\r\n"), 400, "bad-host-header"),
                malformed("27 empty Host", hosts("Host:\r\n"), 400, "bad-host-header"),
                malformed("27 Host with path", hosts("Host: allowed.test/path\r\n"), 400, "bad-host-header"),
                malformed("27 Host with userinfo", hosts("Host: user@allowed.test\r\n"), 400, "bad-host-header"),
                malformed("27 no Host in HTTP/1.1", hosts(""), 400, "bad-host-header"),
                badTarget("28 ftp", "GET ftp://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                badTarget("28 gopher", "GET gopher://allowed.test:70/_x HTTP/1.1\r\nHost: allowed.test:70\r\n\r\n"),
                badTarget("28 file", "GET file:///etc/passwd HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                badTarget("28 dict", "GET dict://allowed.test:11211/ HTTP/1.1\r\nHost: allowed.test:11211\r\n\r\n"),
                badTarget("28 jar", "GET jar:http://allowed.test!/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                badTarget("28 ws", "GET ws://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
                badTarget(
                        "28 absolute-form https", "GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource({"deniedByPolicy", "rejectedAsMalformed"})
    void refusesBeforeAnyLookupOrDial(
            String name, String request, int status, String reason, String decision, String host, int port)
            throws Exception {
        RawResponse response = env.exchange(request);

        assertEquals(status, response.status(), response.statusLine());
        assertEquals(reason, response.header(ProxyReasons.HEADER));
        env.upstream.assertUntouched();
        assertEquals(List.of(), env.dns.queries(), "NO-DNS");
        AuditRecord record = env.onlyRecord();
        assertEquals(decision, record.decision());
        assertEquals(reason, record.reason());
        assertEquals(status, record.status());
        assertEquals(host, record.host());
        assertEquals(port, record.port());
    }

    @Test
    void case1UpperCaseAndTrailingDotReachTheUpstreamAsTheCanonicalHost() throws Exception {
        String request = "GET http://UPSTREAM.TEST.:" + env.upstream.port() + "/x HTTP/1.1\r\nHost: Upstream.Test:"
                + env.upstream.port() + "\r\n\r\n";

        RawResponse response = env.exchange(request);

        assertEquals(200, response.status());
        assertEquals(
                List.of("upstream.test:" + env.upstream.port()),
                env.upstream.requests().getFirst().headers("Host"));
        AuditRecord record = env.onlyRecord();
        assertEquals("allow", record.decision());
        assertEquals("upstream.test", record.host());
        assertEquals("/x", record.path());
    }

    @Test
    void case1TheCanonicalNameIsWhatIsResolved() throws Exception {
        RawResponse response = env.exchange(get("ALLOWED.TEST", "/"));

        // The stub knows no name, so an allowed name ends in a resolution error, not a denial.
        assertEquals(502, response.status());
        assertEquals(List.of("allowed.test"), env.dns.queries());
        AuditRecord record = env.onlyRecord();
        assertEquals("allowed.test", record.host());
        assertEquals("network.allow[0]=allowed.test", record.rule());
    }

    static Stream<Arguments> allowedByPolicy() {
        return Stream.of(
                Arguments.of("6 wildcard at any depth", "a.b.c.wild.test", "network.allow[2]=*.wild.test"),
                Arguments.of("15 underscore label", "a_b.wild.test", "network.allow[2]=*.wild.test"),
                Arguments.of("exact api name", "api.allowed.test", "network.allow[1]=api.allowed.test"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("allowedByPolicy")
    void allowedNamesGetAsFarAsResolution(String name, String host, String rule) throws Exception {
        RawResponse response = env.exchange(connect(host + ":443"));

        assertEquals(502, response.status());
        assertEquals(ProxyReasons.DNS_FAILURE, response.header(ProxyReasons.HEADER));
        assertEquals(List.of(host), env.dns.queries());
        AuditRecord record = env.onlyRecord();
        assertEquals("error", record.decision());
        assertEquals(rule, record.rule());
        assertEquals(host, record.host());
    }

    @Test
    void case24EmptyAllowListMeansNoNetwork() throws Exception {
        try (CorpusProxy none = CorpusProxy.startWithPolicy("version: 1\nnetwork:\n  allow: []\n")) {
            RawResponse response = none.exchange(connect("allowed.test:443"));

            assertEquals(403, response.status());
            assertEquals("no-network", response.header(ProxyReasons.HEADER));
            assertEquals(List.of(), none.dns.queries());
            assertEquals("no-network", none.onlyRecord().reason());
        }
    }

    @Test
    void case30RoutingHeadersFromTheClientChangeNothingAndInternalHeadersAreStripped() throws Exception {
        String request = "GET http://" + env.up() + "/ HTTP/1.1\r\nHost: " + env.up() + "\r\n"
                + "Forwarded: host=evil.test\r\nX-Forwarded-Host: evil.test\r\nX-Original-URL: http://evil.test/\r\n"
                + "X-Rewrite-URL: /admin\r\nX-Agentjail-Upstream: https://evil.test\r\n\r\n";

        RawResponse response = env.exchange(request);

        assertEquals(200, response.status());
        RecordedRequest seen = env.upstream.requests().getFirst();
        assertEquals("GET / HTTP/1.1", seen.requestLine());
        assertEquals(List.of(env.up()), seen.headers("Host"));
        assertEquals(List.of(), seen.headers("X-Agentjail-Upstream"));
        assertEquals(List.of(), env.dns.queries());
        assertEquals(env.up().replaceFirst(":.*", ""), env.onlyRecord().host());
    }

    @Test
    void aDeniedRequestWithoutBodyKeepsTheConnectionForTheNextRequest() throws Exception {
        try (RawClient client = env.client()) {
            client.send(get("evil.test", "/"));
            RawResponse denied = client.readResponse(WAIT);
            client.send(get(env.up(), "/"));
            List<RawResponse> both = client.readResponses(2, WAIT);

            assertEquals(403, denied.status());
            assertTrue(denied.body().contains("denied"), denied.body());
            assertEquals(2, both.size(), client.received());
            assertEquals(200, both.get(1).status());
        }
        assertEquals(
                List.of("deny", "allow"),
                env.awaitRecords(2).stream().map(AuditRecord::decision).toList());
    }

    // ---- table rows ----

    private static Arguments denied(String name, String request, String host, int port) {
        return row(name, request, 403, "not-in-allowlist", "deny", host, port);
    }

    private static Arguments badTarget(String name, String request) {
        return malformed(name, request, 400, "bad-target");
    }

    private static Arguments malformed(String name, String request, int status, String reason) {
        return row(name, request, status, reason, "error", null, 0);
    }

    private static Arguments row(
            String name, String request, int status, String reason, String decision, String host, int port) {
        return Arguments.of(name, request, status, reason, decision, host, port);
    }

    private static String hosts(String hostHeaders) {
        return "GET http://allowed.test/ HTTP/1.1\r\n" + hostHeaders + "\r\n";
    }
}
