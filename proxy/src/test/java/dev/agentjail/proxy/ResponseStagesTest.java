package dev.agentjail.proxy;

import static dev.agentjail.proxy.StageHarness.last;
import static dev.agentjail.proxy.StageHarness.part;
import static dev.agentjail.proxy.StageHarness.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.mcp.McpErrors;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each response stage on its own, on an {@link EmbeddedChannel}: credential scrubbing and the MCP response filter see
 * every response of their exchange, change what they must, and refuse what they cannot inspect.
 */
@ExtendWith(NettyLeakGuard.class)
class ResponseStagesTest {
    private static final String VALUE = "sk-ant-" + "api03-realvalue-0123456789";
    /** As long as the value: the scrubber swaps it back without changing the framing. */
    private static final String PLACEHOLDER = "agentjail-ph-" + "x".repeat(VALUE.length() - 13);

    private static final Target API = new Target("api.test", HostKind.DNS, 443);
    private static final String POLICY = """
            version: 1
            network:
              allow: ["api.test", "mcp.test:80", "other.test:80"]
            mcp:
              servers:
                - name: docs
                  url: http://mcp.test/mcp
                  tools: {allow: ["search*"]}
            """;
    private static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}";
    private static final String TOOLS = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":["
            + "{\"name\":\"search\",\"inputSchema\":{}},{\"name\":\"delete_repo\",\"inputSchema\":{}}]}}";
    private static final String FILTERED =
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"search\",\"inputSchema\":{}}]}}";

    // ---- ResponseScrubbing ----

    private static Exchange withCredential() {
        InjectedCredential credential =
                new InjectedCredential(new CredentialRule("KEY", null, List.of(API), "x-api-key"), PLACEHOLDER, VALUE);
        StageHarness h = new StageHarness(POLICY, List.of(credential));
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/v1/echo");
        request.headers().set("Host", "api.test").set("x-api-key", PLACEHOLDER);
        Exchange ex = ((RequestIntake.Admitted) h.interceptedIntake(API).admit(request)).exchange();
        assertTrue(ex.outbound.scrubber().isPresent(), "the request carries the injected value");
        return ex;
    }

    @Test
    void theRealValueGoesBackToItsPlaceholderInHeadersBodyAndTrailers() {
        Exchange ex = withCredential();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(new ResponseScrubbing(() -> ex), out);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set("X-Echo", "key=" + VALUE).set("Transfer-Encoding", "chunked");

        ch.writeInbound(head, part("you sent " + VALUE.substring(0, 9)), last(VALUE.substring(9) + "."));

        HttpResponse seen = assertInstanceOf(HttpResponse.class, out.seen.getFirst());
        assertEquals("key=" + PLACEHOLDER, seen.headers().get("X-Echo"));
        String body = String.join("", out.parts()).replace("part:", "").replace("last:", "");
        assertEquals("you sent " + PLACEHOLDER + ".", body);
        assertFalse(ch.finishAndReleaseAll());
    }

    static Stream<Arguments> encodedResponses() {
        return Stream.of(
                Arguments.of("gzip", List.of("Content-Encoding", "gzip")),
                Arguments.of(
                        "identity, then gzip", List.of("Content-Encoding", "identity", "Content-Encoding", "GZIP")),
                Arguments.of("a list", List.of("Content-Encoding", "identity, br")),
                Arguments.of("a transfer-coding", List.of("Transfer-Encoding", "gzip, chunked")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("encodedResponses")
    void anEncodedResponseIsRefusedForItCannotBeScrubbed(String name, List<String> headers) {
        Exchange ex = withCredential();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(new ResponseScrubbing(() -> ex), out);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        for (int i = 0; i < headers.size(); i += 2) {
            head.headers().add(headers.get(i), headers.get(i + 1));
        }

        ch.writeInbound(head);

        ExchangeSignal.ResponseRefused r = assertInstanceOf(ExchangeSignal.ResponseRefused.class, out.seen.getFirst());
        assertEquals(ProxyReasons.CREDENTIAL_RESPONSE_ENCODED, r.reason());
        assertEquals(502, r.status().code());
        assertFalse(ch.finishAndReleaseAll());
    }

    // ---- McpResponseFilter ----

    /** An exchange that asked the approved server for its tool list. */
    private static Exchange listRequest() {
        StageHarness h = new StageHarness(POLICY);
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel request = new EmbeddedChannel(h.intake(), new BodyScanner(), new McpRequestGate(), out);
        request.writeInbound(post("http://mcp.test/mcp", "application/json"), last(LIST));
        Exchange ex = assertInstanceOf(ExchangeSignal.McpReady.class, out.seen.getLast())
                .exchange();
        ex.mcp.takeBody().release();
        assertFalse(request.finishAndReleaseAll());
        return ex;
    }

    static Stream<Arguments> answersAClientReads() {
        return Stream.of(
                Arguments.of(200, "application/json"),
                Arguments.of(201, "application/json"),
                Arguments.of(202, "application/json; charset=utf-8"),
                Arguments.of(200, "application/json-x"),
                Arguments.of(299, "text/html, application/json"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("answersAClientReads")
    void everyJsonAnswerAClientReadsIsFilteredAndSentWithItsNewLength(int status, String type) {
        Exchange ex = listRequest();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(new McpResponseFilter(() -> ex), out);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status));
        head.headers().set("Content-Type", type).set("Transfer-Encoding", "chunked");

        ch.writeInbound(head, part(TOOLS.substring(0, 40)));
        assertTrue(out.seen.isEmpty(), "held until the answer is filtered");
        ch.writeInbound(last(TOOLS.substring(40)));

        HttpResponse sent = assertInstanceOf(HttpResponse.class, out.seen.getFirst());
        assertEquals(String.valueOf(FILTERED.length()), sent.headers().get("Content-Length"));
        assertEquals(null, sent.headers().get("Transfer-Encoding"));
        assertEquals(List.of("last:" + FILTERED), out.parts());
        assertEquals(1, ex.mcp.details().hidden());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void anEventStreamIsFilteredEventByEventAndUnapprovedSamplingDropped() {
        Exchange ex = listRequest();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(new McpResponseFilter(() -> ex), out);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set("Content-Type", "text/event-stream;charset=utf-8");

        ch.writeInbound(head);
        ch.writeInbound(part("data: {\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"sampling/createMessage\"}\n\n"));
        ch.writeInbound(last("data: " + TOOLS + "\n\n"));

        assertInstanceOf(HttpResponse.class, out.seen.getFirst());
        assertEquals(List.of("last:data: " + FILTERED + "\n\n"), out.parts());
        assertEquals(1, ex.mcp.details().dropped());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aListAnswerThatIsNotJsonRpcIsRefused() {
        Exchange ex = listRequest();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(new McpResponseFilter(() -> ex), out);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set("Content-Type", "application/json");

        ch.writeInbound(head, last("{\"tools\":[{\"name\":\"delete_repo\"}]}"));

        ExchangeSignal.ResponseRefused r = assertInstanceOf(ExchangeSignal.ResponseRefused.class, out.seen.getFirst());
        assertEquals(McpErrors.REASON_UNINSPECTABLE, r.reason());
        assertEquals(AuditRecord.ERROR, r.decision());
        assertEquals(1, out.seen.size(), "nothing of the answer went on");
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void responsesToAnythingElsePassAsTheyAre() {
        StageHarness h = new StageHarness(POLICY);
        Exchange ex = ((RequestIntake.Admitted) h.intake().admit(StageHarness.get("http://other.test/x"))).exchange();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(new McpResponseFilter(() -> ex), out);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set("Content-Type", "application/json");

        ch.writeInbound(head, last(TOOLS));

        assertEquals(head, out.seen.getFirst());
        assertEquals(List.of("last:" + TOOLS), out.parts());
        assertFalse(ch.finishAndReleaseAll());
    }
}
