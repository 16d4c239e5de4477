package dev.agentjail.proxy;

import static dev.agentjail.proxy.testing.CorpusProxy.WAIT;
import static dev.agentjail.proxy.testing.CorpusProxy.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.http.StrictRequestDecoder;
import dev.agentjail.proxy.testing.CorpusProxy;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
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
 * Corpus sections 4 and 5 through a real proxy, aimed at the allowed recorder so that anything that slipped through
 * would be seen there: every smuggling input is refused with its reason and closes the connection, the recorder gets
 * no byte of it, and one audit record says "error". Also pipelining, early and interim responses, a misbehaving
 * upstream, and hop-by-hop headers.
 */
class ProxyFramingTest {
    /** Replaced by the recorder's allowed authority in every table row. */
    private static final String UP = "UP";

    private static final String ABH = StrictRequestDecoder.AMBIGUOUS_BODY_HEADER;
    private static final String CHUNKED_HELLO = "5\r\nhello\r\n0\r\n\r\n";

    private CorpusProxy env;

    @BeforeEach
    void start() throws Exception {
        env = CorpusProxy.start();
    }

    @AfterEach
    void stop() throws Exception {
        env.close();
    }

    static Stream<Arguments> smuggling() {
        return Stream.of(
                head(
                        "64 CL.TE",
                        post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nG"),
                        400,
                        "ambiguous-framing"),
                head(
                        "65 TE.CL",
                        post(
                                "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
                                "5c\r\nGPOST http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\nContent-Length: 15\r\n\r\nx=1\r\n0\r\n\r\n"),
                        400,
                        "ambiguous-framing"),
                head(
                        "66 duplicate Content-Length",
                        post("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"),
                        400,
                        "ambiguous-framing"),
                head("67 Content-Length list", post("Content-Length: 5, 5\r\n", "hello"), 400, "bad-content-length"),
                head("69 signed Content-Length", post("Content-Length: +5\r\n", "hello"), 400, "bad-content-length"),
                head("70 leading zeros", post("Content-Length: 0005\r\n", "hello"), 400, "bad-content-length"),
                head(
                        "71 xchunked with Content-Length",
                        post("Content-Length: 4\r\nTransfer-Encoding: xchunked\r\n", "5c\r\nG"),
                        400,
                        "ambiguous-framing"),
                head(
                        "71 chunked not final",
                        post("Transfer-Encoding: chunked, identity\r\n", CHUNKED_HELLO),
                        400,
                        "bad-transfer-encoding"),
                head(
                        "73 space before colon",
                        post("Transfer-Encoding : chunked\r\n", CHUNKED_HELLO),
                        400,
                        "malformed-header"),
                head(
                        "73 underscore name",
                        post("Transfer_Encoding: chunked\r\nContent-Length: 5\r\n", "hello"),
                        400,
                        "ambiguous-framing"),
                head(
                        "74 folded Transfer-Encoding",
                        post("Transfer-Encoding:\r\n chunked\r\n", CHUNKED_HELLO),
                        400,
                        "obs-fold"),
                head("75 folded header", post("X-Note: a\r\n b\r\nContent-Length: 0\r\n", ""), 400, "obs-fold"),
                head(
                        "76 duplicate Transfer-Encoding",
                        post(
                                "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n",
                                "hello"),
                        400,
                        "ambiguous-framing"),
                head(
                        "78 Connection lists a framing header",
                        post("Connection: Transfer-Encoding\r\nTransfer-Encoding: chunked\r\n", CHUNKED_HELLO),
                        400,
                        "ambiguous-framing"),
                body(
                        "79 chunk size 0x5",
                        post("Transfer-Encoding: chunked\r\n", "0x5\r\nhello\r\n0\r\n\r\n"),
                        400,
                        "bad-chunk"),
                body(
                        "79 chunk size overflow",
                        post("Transfer-Encoding: chunked\r\n", "ffffffffffffffff1\r\nhello\r\n0\r\n\r\n"),
                        400,
                        "bad-chunk"),
                body(
                        "80 bare LF in chunk extension",
                        post("Transfer-Encoding: chunked\r\n", "5;\nhello\r\n0\r\n\r\n"),
                        400,
                        "bad-line-ending"),
                body(
                        "82 chunk data spills",
                        post("Transfer-Encoding: chunked\r\n", "5\r\nhello!!\r\n0\r\n\r\n"),
                        400,
                        "bad-chunk"),
                body(
                        "83 LF-only chunks",
                        post("Transfer-Encoding: chunked\r\n", "5\nhello\n0\n\n"),
                        400,
                        "bad-line-ending"),
                body(
                        "84 64 KiB chunk extension",
                        post(
                                "Transfer-Encoding: chunked\r\n",
                                "5;x=" + "a".repeat(64 * 1024) + "\r\nhello\r\n0\r\n\r\n"),
                        431,
                        "bad-chunk"),
                head("86 bare LF line endings", "GET http://UP/ HTTP/1.1\nHost: UP\n\n", 400, "bad-line-ending"),
                head(
                        "93 control character before a name",
                        post("\u001cTransfer-Encoding: chunked\r\n", CHUNKED_HELLO),
                        400,
                        "malformed-header"),
                head("94 header without colon", post("Foo\r\nContent-Length: 0\r\n", ""), 400, "malformed-header"),
                head(
                        "95 NUL in a value",
                        post("X-A: v\u0000alue\r\nContent-Length: 0\r\n", ""),
                        400,
                        "malformed-header"),
                head(
                        "96 non-ASCII name",
                        post("H\u00c3\u00aba\u0064er: x\r\nContent-Length: 0\r\n", ""),
                        400,
                        "malformed-header"),
                head(
                        "97 two spaces in the request line",
                        "GET  http://UP/ HTTP/1.1\r\nHost: UP\r\n\r\n",
                        400,
                        "malformed-request-line"),
                head("97 HTTP/0.9", "GET http://UP/\r\n\r\n", 400, "malformed-request-line"),
                head("97 HTTP/1.2", "GET http://UP/ HTTP/1.2\r\nHost: UP\r\n\r\n", 505, "bad-version"),
                head("97 fragment", "GET http://UP/#x HTTP/1.1\r\nHost: UP\r\n\r\n", 400, "malformed-request-line"),
                head("97 unknown method", "FOO http://UP/ HTTP/1.1\r\nHost: UP\r\n\r\n", 501, "bad-method"),
                head("97 TRACE", "TRACE http://UP/ HTTP/1.1\r\nHost: UP\r\n\r\n", 405, "bad-method"),
                head(
                        "102 100 KB URL",
                        "GET http://UP/" + "u".repeat(100 * 1024) + " HTTP/1.1\r\nHost: UP\r\n\r\n",
                        414,
                        "uri-too-long"),
                head(
                        "102 100 KB header value",
                        post("X-Big: " + "v".repeat(100 * 1024) + "\r\n", ""),
                        431,
                        "head-too-large"),
                head("102 100 KB header name", post("N".repeat(100 * 1024) + ": v\r\n", ""), 431, "head-too-large"),
                head(
                        "102 100 KB method",
                        "M".repeat(100 * 1024) + " http://UP/ HTTP/1.1\r\nHost: UP\r\n\r\n",
                        414,
                        "uri-too-long"),
                head("102 10,000 headers", post("X-H: v\r\n".repeat(10_000), ""), 431, "too-many-headers"),
                head("105 binary garbage", "\u0000\u0001\u0002\u00ff garbage\r\n\r\n", 400, "malformed-request-line"),
                // issue 17: one reading of the headers that type and encode the body; Transfer-Encoding in 1.0
                head(
                        "Content-Encoding identity then gzip",
                        post("Content-Encoding: identity\r\ncontent-encoding: gzip\r\nContent-Length: 5\r\n", "hello"),
                        400,
                        ABH),
                head(
                        "Content-Type twice",
                        post("Content-Type: text/plain\r\nContent-Type: application/json\r\nContent-Length: 0\r\n", ""),
                        400,
                        ABH),
                head(
                        "Content-Encoding gzip, identity",
                        post("Content-Encoding: gzip, identity\r\nContent-Length: 0\r\n", ""),
                        400,
                        ABH),
                head(
                        "HTTP/1.0 with Transfer-Encoding",
                        "POST http://UP/ HTTP/1.0\r\nHost: UP\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED_HELLO,
                        400,
                        "ambiguous-framing"),
                head("105 HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 501, "bad-method"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("smuggling")
    void smugglingIsRefusedClosedRecordedAndNeverForwarded(
            String name, String template, boolean inHead, int status, String reason) throws Exception {
        try (RawClient client = env.client()) {
            client.send(template.replace(UP, env.up()));
            String received = client.readUntilClose(WAIT);
            List<RawResponse> responses = RawResponse.parseAll(received, true);

            assertTrue(client.closedByPeer(), "connection closed");
            assertEquals(1, responses.size(), received);
            assertEquals(status, responses.getFirst().status());
            assertEquals(reason, responses.getFirst().header(ProxyReasons.HEADER));
            assertTrue(responses.getFirst().closes());
        }
        if (inHead) {
            env.upstream.assertUntouched();
        } else {
            // The head was valid, so the dial may have started; not one byte may have been sent on it.
            Thread.sleep(100);
            assertEquals("", env.upstream.received());
        }
        AuditRecord record = env.onlyRecord();
        assertEquals("error", record.decision());
        assertEquals(reason, record.reason());
        assertEquals(status, record.status());
    }

    // ---- 88: bodies that look like requests, early responses ----

    @Test
    void case88ABodyThatIsARequestIsForwardedAsABodyWithItsLength() throws Exception {
        String smuggled = "GET http://evil.test/ HTTP/1.1\r\nX: y\r\n\r\n";
        String request = "GET http://" + env.up() + "/static HTTP/1.1\r\nHost: " + env.up() + "\r\nContent-Length: "
                + smuggled.length() + "\r\n\r\n" + smuggled;

        RawResponse response = env.exchange(request);

        assertEquals(200, response.status());
        assertEquals(1, env.upstream.requests().size());
        RecordedRequest seen = env.upstream.requests().getFirst();
        assertEquals(List.of(String.valueOf(smuggled.length())), seen.headers("Content-Length"));
        assertEquals(smuggled, seen.body());
        assertEquals(1, env.awaitRecords(1).size());
    }

    @Test
    void case88AnEarlyResponseClosesTheUpstreamConnectionAndTheClient() throws Exception {
        try (RecordingUpstream early = RecordingUpstream.startAnsweringBeforeBody(r -> RecordingUpstream.OK);
                CorpusProxy proxy = CorpusProxy.start(early)) {
            try (RawClient client = proxy.client()) {
                client.send("POST http://" + proxy.up() + "/upload HTTP/1.1\r\nHost: " + proxy.up()
                        + "\r\nContent-Length: 40\r\n\r\n0123456789");
                RawResponse response = client.readResponse(WAIT);

                assertEquals(200, response.status());
                assertTrue(response.closes(), "an early response ends the client connection too");
                assertTrue(client.awaitClose(WAIT));
            }
            assertTrue(
                    RecordingUpstream.await(() -> early.closedConnections() == 1, WAIT), "upstream connection closed");
            assertEquals(1, early.connections());
            assertEquals(1, proxy.awaitRecords(1).size());
        }
    }

    // ---- 89: Expect: 100-continue ----

    @ParameterizedTest(name = "89 Expect: {0}")
    @MethodSource
    void anAllowedHostGets100ContinueAndThenTheFinalResponse(String expectation) throws Exception {
        String body = "canary-".repeat(9) + "0";
        try (RawClient client = env.client()) {
            client.send("POST http://" + env.up() + "/upload HTTP/1.1\r\nHost: " + env.up() + "\r\nContent-Length: "
                    + body.length() + "\r\nExpect: " + expectation + "\r\n\r\n");
            String interim = client.readUntil("\r\n\r\n", WAIT);
            assertEquals("HTTP/1.1 100 Continue\r\n\r\n", interim);

            client.send(body);
            List<RawResponse> responses = client.readResponses(2, WAIT);
            assertEquals(
                    List.of(100, 200),
                    responses.stream().map(RawResponse::status).toList());
        }
        RecordedRequest seen = env.upstream.requests().getFirst();
        assertEquals(body, seen.body());
        assertEquals(List.of(), seen.headers("Expect"), "the proxy answered the expectation itself");
        assertEquals(1, env.awaitRecords(1).size());
    }

    static Stream<String> anAllowedHostGets100ContinueAndThenTheFinalResponse() {
        return Stream.of("100-continue", "100-Continue");
    }

    @Test
    void case89ADeniedHostGets403WithoutAny100() throws Exception {
        try (RawClient client = env.client()) {
            client.send("POST http://evil.test/upload HTTP/1.1\r\nHost: evil.test\r\nContent-Length: 64\r\n"
                    + "Expect: 100-continue\r\n\r\n");
            String received = client.readUntilClose(WAIT);

            assertTrue(received.startsWith("HTTP/1.1 403 "), received);
            assertFalse(received.contains("100 Continue"), received);
            assertTrue(client.closedByPeer(), "closed: the body it announced will not be read");
        }
        assertEquals("deny", env.onlyRecord().decision());
    }

    @Test
    void case89AnUnknownExpectationGets417() throws Exception {
        try (RawClient client = env.client()) {
            client.send("POST http://" + env.up() + "/upload HTTP/1.1\r\nHost: " + env.up()
                    + "\r\nContent-Length: 5\r\nExpect: 200-ok\r\n\r\nhello");
            String received = client.readUntilClose(WAIT);
            RawResponse response = RawResponse.parseAll(received, true).getFirst();

            assertEquals(417, response.status());
            assertEquals("expectation-failed", response.header(ProxyReasons.HEADER));
        }
        env.upstream.assertUntouched();
        assertEquals("expectation-failed", env.onlyRecord().reason());
    }

    // ---- 90: pipelining ----

    @Test
    void case90AllowedThenDeniedAreAnsweredInOrder() throws Exception {
        try (RawClient client = env.client()) {
            client.send(get(env.up(), "/first") + get("evil.test", "/second"));
            List<RawResponse> responses = client.readResponses(2, WAIT);

            assertEquals(
                    List.of(200, 403),
                    responses.stream().map(RawResponse::status).toList());
            assertEquals(RecordingUpstream.OK_BODY, responses.get(0).body());
        }
        assertEquals(1, env.upstream.requests().size());
        List<AuditRecord> records = env.awaitRecords(2);
        assertEquals(
                List.of("allow", "deny"),
                records.stream().map(AuditRecord::decision).toList());
        assertEquals(
                List.of("/first", "/second"),
                records.stream().map(AuditRecord::path).toList());
    }

    @Test
    void case90EveryPipelinedRequestIsAnsweredInOrder() throws Exception {
        try (RawClient client = env.client()) {
            client.send(get(env.up(), "/1")
                    + get(env.up(), "/2")
                    + get("evil.test", "/3")
                    + get(env.up(), "/4")
                    + post("Content-Length: 3\r\n", "abc").replace(UP, env.up()));
            List<RawResponse> responses = client.readResponses(5, WAIT);

            assertEquals(
                    List.of(200, 200, 403, 200, 200),
                    responses.stream().map(RawResponse::status).toList());
        }
        assertEquals(
                List.of("GET /1 HTTP/1.1", "GET /2 HTTP/1.1", "GET /4 HTTP/1.1", "POST / HTTP/1.1"),
                env.upstream.requests().stream()
                        .map(RecordedRequest::requestLine)
                        .toList());
        assertEquals(1, env.upstream.connections(), "one kept-alive upstream connection");
        assertEquals(5, env.awaitRecords(5).size());
    }

    @Test
    void case90AMalformedFirstRequestStopsTheConnectionAndTheSecondIsNeverParsed() throws Exception {
        try (RawClient client = env.client()) {
            client.send(post("Content-Length: 1\r\nContent-Length: 2\r\n", "ab").replace(UP, env.up())
                    + get(env.up(), "/second"));
            String received = client.readUntilClose(WAIT);

            assertEquals(1, RawResponse.parseAll(received, true).size(), received);
            assertTrue(received.startsWith("HTTP/1.1 400 "), received);
        }
        env.upstream.assertUntouched();
        assertEquals("ambiguous-framing", env.onlyRecord().reason());
    }

    @Test
    void case90AMalformedSecondRequestIsRefusedAfterTheFirstIsAnswered() throws Exception {
        try (RawClient client = env.client()) {
            client.send(get(env.up(), "/first") + "GET http://" + env.up() + "/second HTTP/1.1\nHost: x\n\n");
            String received = client.readUntilClose(WAIT);
            List<RawResponse> responses = RawResponse.parseAll(received, true);

            assertEquals(
                    List.of(200, 400),
                    responses.stream().map(RawResponse::status).toList());
        }
        assertEquals(1, env.upstream.requests().size());
        assertEquals(
                List.of("allow", "error"),
                env.awaitRecords(2).stream().map(AuditRecord::decision).toList());
    }

    // ---- 91: no reuse after errors ----

    @Test
    void case91AfterAFramingRejectionTheNextRequestUsesAFreshUpstreamConnection() throws Exception {
        try (RawClient client = env.client()) {
            client.send(get(env.up(), "/first"));
            assertEquals(200, client.readResponse(WAIT).status());
            client.send(post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nG")
                    .replace(UP, env.up()));
            assertTrue(client.awaitClose(WAIT));
        }
        assertTrue(
                RecordingUpstream.await(() -> env.upstream.closedConnections() == 1, WAIT),
                "pooled connection discarded");

        assertEquals(200, env.exchange(get(env.up(), "/after")).status());

        assertEquals(2, env.upstream.connections());
        assertEquals(
                List.of(1, 2),
                env.upstream.requests().stream()
                        .map(RecordedRequest::connection)
                        .toList());
        assertEquals(3, env.awaitRecords(3).size());
    }

    // ---- 92: a misbehaving upstream ----

    static Stream<Arguments> badUpstreamResponses() {
        return Stream.of(
                Arguments.of(
                        "Content-Length and Transfer-Encoding",
                        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nhello",
                        "upstream-protocol-error"),
                Arguments.of(
                        "two Content-Lengths",
                        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
                        "upstream-protocol-error"),
                Arguments.of(
                        "101 to a plain request",
                        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
                        "upstream-protocol-error"),
                Arguments.of("not HTTP", "SSH-2.0-OpenSSH_9.6\r\n\r\n", "upstream-protocol-error"),
                Arguments.of(
                        "bare LF status line", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", "upstream-protocol-error"));
    }

    @ParameterizedTest(name = "92 {0}")
    @MethodSource("badUpstreamResponses")
    void aMalformedUpstreamResponseIsABadGateway(String name, String upstreamAnswer, String reason) throws Exception {
        try (RecordingUpstream bad = RecordingUpstream.start(r -> upstreamAnswer);
                CorpusProxy proxy = CorpusProxy.start(bad)) {
            try (RawClient client = proxy.client()) {
                client.send(get(proxy.up(), "/"));
                String received = client.readUntilClose(WAIT);
                List<RawResponse> responses = RawResponse.parseAll(received, true);

                assertEquals(1, responses.size(), received);
                assertEquals(502, responses.getFirst().status(), received);
                assertEquals(reason, responses.getFirst().header(ProxyReasons.HEADER));
            }
            assertTrue(RecordingUpstream.await(() -> bad.closedConnections() == 1, WAIT), "upstream connection closed");
            AuditRecord record = proxy.onlyRecord();
            assertEquals("error", record.decision());
            assertEquals(reason, record.reason());
        }
    }

    @Test
    void case92ASecondResponseToOneRequestIsNeverDelivered() throws Exception {
        String two = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none"
                + "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond";
        try (RecordingUpstream bad =
                        RecordingUpstream.start(r -> r.requestLine().contains("/after") ? RecordingUpstream.OK : two);
                CorpusProxy proxy = CorpusProxy.start(bad)) {
            try (RawClient client = proxy.client()) {
                client.send(get(proxy.up(), "/"));
                RawResponse first = client.readResponse(WAIT);
                assertEquals("one", first.body());
                assertTrue(
                        RecordingUpstream.await(() -> bad.closedConnections() == 1, WAIT),
                        "upstream connection closed");

                client.send(get(proxy.up(), "/after"));
                List<RawResponse> responses = client.readResponses(2, WAIT);
                assertEquals(2, responses.size(), client.received());
                assertEquals(RecordingUpstream.OK_BODY, responses.get(1).body());
                assertFalse(client.received().contains("second"), client.received());
            }
            assertEquals(2, bad.connections(), "the next request used a fresh upstream connection");
            assertEquals(2, proxy.awaitRecords(2).size());
        }
    }

    @Test
    void case92ABodyOnAHeadResponseIsNeverDelivered() throws Exception {
        try (RecordingUpstream bad =
                        RecordingUpstream.start(r -> "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret");
                CorpusProxy proxy = CorpusProxy.start(bad)) {
            try (RawClient client = proxy.client()) {
                client.send("HEAD http://" + proxy.up() + "/ HTTP/1.1\r\nHost: " + proxy.up() + "\r\n\r\n");
                String received = client.readUntil("\r\n\r\n", WAIT);
                assertTrue(received.startsWith("HTTP/1.1 200 "), received);
                assertTrue(
                        RecordingUpstream.await(() -> bad.closedConnections() == 1, WAIT),
                        "upstream connection closed");

                client.readUntilClose(java.time.Duration.ofMillis(300));
                assertFalse(client.received().contains("secret"), client.received());
            }
            assertEquals(1, proxy.awaitRecords(1).size());
        }
    }

    @Test
    void anUpstreamThatClosesBeforeAnsweringIsABadGateway() throws Exception {
        try (RecordingUpstream silent = RecordingUpstream.start(r -> null);
                CorpusProxy proxy = CorpusProxy.start(silent)) {
            try (RawClient client = proxy.client()) {
                client.send(get(proxy.up(), "/"));
                RecordingUpstream.await(() -> silent.requests().size() == 1, WAIT);
                silent.close();
                RawResponse response = client.readResponse(WAIT);

                assertEquals(502, response.status());
                assertEquals("upstream-closed", response.header(ProxyReasons.HEADER));
            }
            assertEquals("upstream-closed", proxy.onlyRecord().reason());
        }
    }

    // ---- 100, 101: hop-by-hop and internal headers ----

    @Test
    void case100And101HopByHopAndInternalHeadersNeverReachTheUpstream() throws Exception {
        String request = "GET http://" + env.up() + "/ HTTP/1.1\r\nHost: " + env.up() + "\r\n"
                + "Connection: keep-alive, X-Audit-Id, Authorization, Host\r\n"
                + "Proxy-Authorization: Basic cHJveHk6c2VjcmV0\r\nProxy-Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n"
                + "TE: trailers\r\nUpgrade: websocket\r\nTrailer: X-T\r\nX-Audit-Id: 7\r\nAuthorization: Bearer abc\r\n"
                + "X-Agentjail-Project: other-project\r\nx-agentjail-session: forged\r\nX-Kept: yes\r\n\r\n";

        assertEquals(200, env.exchange(request).status());

        RecordedRequest seen = env.upstream.requests().getFirst();
        List<String> names = seen.headerNames().stream()
                .map(n -> n.toLowerCase(java.util.Locale.ROOT))
                .toList();
        for (String stripped : List.of(
                "connection",
                "proxy-authorization",
                "proxy-connection",
                "keep-alive",
                "te",
                "upgrade",
                "trailer",
                "x-audit-id",
                "authorization",
                "x-agentjail-project",
                "x-agentjail-session")) {
            assertFalse(names.contains(stripped), stripped + " reached the upstream: " + seen.head());
        }
        assertEquals(List.of(env.up()), seen.headers("Host"), "the client's Connection list cannot remove our Host");
        assertEquals(List.of("yes"), seen.headers("X-Kept"));
        assertEquals(1, env.awaitRecords(1).size());
    }

    // ---- HTTP/1.0 (RFC 9112 sections 6 and 9.3) ----

    @Test
    void http10WithoutContentLengthHasNoBodyAndTheConnectionEndsAfterTheResponse() throws Exception {
        String smuggled = "GET http://" + env.up() + "/smuggled HTTP/1.1\r\nHost: " + env.up() + "\r\n\r\n";
        try (RawClient client = env.client()) {
            client.send("POST http://" + env.up() + "/ten HTTP/1.0\r\nHost: " + env.up() + "\r\n\r\n" + smuggled);
            String received = client.readUntilClose(WAIT);

            assertTrue(client.closedByPeer(), "a 1.0 request without keep-alive ends its connection");
            List<RawResponse> responses = RawResponse.parseAll(received, true);
            assertEquals(1, responses.size(), received);
            assertEquals(200, responses.getFirst().status());
        }
        assertEquals(1, env.awaitRecords(1).size());
        assertEquals(1, env.upstream.requests().size());
        RecordedRequest seen = env.upstream.requests().getFirst();
        assertTrue(seen.requestLine().startsWith("POST /ten "), seen.requestLine());
        assertEquals("", seen.body(), "the bytes after a 1.0 head without Content-Length are no body");
        assertFalse(env.upstream.received().contains("/smuggled"), env.upstream.received());
    }

    @Test
    void http10KeepAliveIsHonouredAndAnswered() throws Exception {
        String request =
                "GET http://" + env.up() + "/k HTTP/1.0\r\nHost: " + env.up() + "\r\nConnection: keep-alive\r\n\r\n";
        try (RawClient client = env.client()) {
            client.send(request);
            RawResponse first = client.readResponse(WAIT);
            assertEquals(200, first.status());
            assertEquals("keep-alive", first.header("Connection"), "a 1.0 client closes unless told keep-alive");
            assertFalse(client.closedByPeer());

            client.send(request.replace("/k ", "/k2 ").replace("Connection: keep-alive\r\n", ""));
            String received = client.readUntilClose(WAIT);
            assertTrue(client.closedByPeer(), "without keep-alive the second request ends the connection");
            assertTrue(received.contains(RecordingUpstream.OK_BODY), received);
        }
        assertEquals(2, env.awaitRecords(2).size());
        assertEquals(2, env.upstream.requests().size());
    }

    @Test
    void http10ClientsNeverGetChunkedResponses() throws Exception {
        String chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        try (RecordingUpstream up = RecordingUpstream.start(r -> chunked);
                CorpusProxy proxy = CorpusProxy.start(up)) {
            for (String connection : List.of("", "Connection: keep-alive\r\n")) {
                try (RawClient client = proxy.client()) {
                    client.send("GET http://" + proxy.up() + "/c HTTP/1.0\r\nHost: " + proxy.up() + "\r\n" + connection
                            + "\r\n");
                    String received = client.readUntilClose(WAIT);

                    assertTrue(client.closedByPeer(), "the body ends with the connection");
                    RawResponse response = RawResponse.parseAll(received, true).getFirst();
                    assertEquals(null, response.header("Transfer-Encoding"), received);
                    assertEquals("hello world", response.body(), received);
                }
            }
        }
    }

    // ---- table rows ----

    private static Arguments head(String name, String template, int status, String reason) {
        return Arguments.of(name, template, true, status, reason);
    }

    private static Arguments body(String name, String template, int status, String reason) {
        return Arguments.of(name, template, false, status, reason);
    }

    private static String post(String headers, String body) {
        return "POST http://UP/ HTTP/1.1\r\nHost: UP\r\n" + headers + "\r\n" + body;
    }
}
