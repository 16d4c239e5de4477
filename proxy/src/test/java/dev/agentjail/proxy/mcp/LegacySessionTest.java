package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The legacy HTTP+SSE session as the proxy keeps it, without sockets: which {@code endpoint} events approve a message
 * endpoint, that the approval ends with the stream, and how POSTs to it and answers on the stream are handled.
 */
@ExtendWith(NettyLeakGuard.class)
class LegacySessionTest {
    private static final Target MCP = new Target("mcp.test", HostKind.DNS, 8080);

    private static McpServer server(String name, String url) {
        return new McpServer(
                name,
                Optional.of(URI.create(url)),
                List.of(),
                Map.of(),
                new NameFilter(List.of("search"), List.of()),
                NameFilter.none(),
                NameFilter.none(),
                false,
                false);
    }

    private final McpGate gate = McpGate.of(new McpPolicy(
            List.of(server("docs", "http://mcp.test:8080/sse"), server("other", "http://mcp.test:8080/other/mcp"))));
    private final List<String> injected = new ArrayList<>();

    private static HttpRequest request(HttpMethod method, String originForm) {
        return new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, "http://mcp.test:8080" + originForm);
    }

    /** A GET of the docs stream whose response head (an event stream) is in. */
    private McpExchange stream() {
        McpExchange ex = McpExchange.start(gate, request(HttpMethod.GET, "/sse"), "http", MCP, "/sse");
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set("Content-Type", "text/event-stream");
        assertEquals(McpAnswer.ResponseMode.SSE, ex.answer().onResponseHead(head));
        ex.answer().streamTo(Runnable::run, event -> injected.add(new String(event, StandardCharsets.UTF_8)));
        return ex;
    }

    /** Feeds {@code events} to the stream's filter: what it passes on, or null when it ends the stream. */
    private static String feed(McpExchange ex, String events) {
        ByteBuf in = Unpooled.copiedBuffer(events, StandardCharsets.UTF_8);
        try {
            ByteBuf out = ex.answer().filterSse(in, false, ByteBufAllocator.DEFAULT);
            if (out == null) {
                return null;
            }
            try {
                return out.toString(StandardCharsets.UTF_8);
            } finally {
                out.release();
            }
        } finally {
            in.release();
        }
    }

    private static String endpointEvent(String uri) {
        return "event: endpoint\ndata: " + uri + "\n\n";
    }

    /** A POST of {@code body} to {@code originForm}, offered whole: what the exchange decided. */
    private McpExchange post(String originForm, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        HttpRequest request = request(HttpMethod.POST, originForm);
        HttpUtil.setContentLength(request, bytes.length);
        McpExchange ex = McpExchange.start(gate, request, "http", MCP, originForm);
        ex.offer(new DefaultLastHttpContent(Unpooled.wrappedBuffer(bytes)), true);
        HttpContent collected = ex.takeBody();
        if (collected != null) {
            collected.release();
        }
        return ex;
    }

    private McpServer docsAt(String originForm) {
        LegacySession s = gate.legacy().at(LegacyEndpoints.key("http", "mcp.test", 8080, originForm));
        return s == null ? null : s.server();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "/messages?sessionId=1|/messages?sessionId=1",
                "messages?sessionId=1|/messages?sessionId=1",
                "http://mcp.test:8080/m?s=1|/m?s=1",
                "HTTP://MCP.test.:8080/m?s=1|/m?s=1",
                "/sse?sessionId=1|/sse?sessionId=1"
            })
    void anEndpointOnTheStreamsOriginIsApprovedWhileTheStreamLasts(String uri, String registered) {
        McpExchange ex = stream();

        assertEquals(endpointEvent(uri), feed(ex, endpointEvent(uri)));

        assertEquals("docs", docsAt(registered).name());
        ex.end();
        assertNull(docsAt(registered), "the endpoint ends with its stream");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "//evil.test/m?s=1",
                "http://evil.test:8080/m?s=1",
                "https://mcp.test:8080/m?s=1",
                "http://mcp.test:8081/m?s=1",
                "http://mcp.test/m?s=1",
                "http://user@mcp.test:8080/m?s=1",
                "/m?s=1#fragment",
                "/m?s=1 2",
                "mailto:a@mcp.test",
                "/other/mcp?s=1",
                "/a/../m?s=1",
                "/a/%2E%2e/m?s=1",
                "/./m?s=1"
            })
    void anEndpointElsewhereEndsTheStreamAndApprovesNothing(String uri) {
        McpExchange ex = stream();

        assertNull(feed(ex, endpointEvent(uri)));

        assertEquals(McpErrors.REASON_ENDPOINT_REFUSED, ex.answer().streamReason());
        assertEquals(AuditRecord.DENY, ex.answer().streamDecision());
        assertEquals(0, gate.legacy().size());
    }

    @Test
    void aSecondEndpointOrOneTakenEndsTheStream() {
        McpExchange first = stream();
        assertNotNull(feed(first, endpointEvent("/m?s=1")));
        assertNull(feed(first, endpointEvent("/m?s=2")), "a second endpoint");

        McpExchange other = stream();
        assertNull(feed(other, endpointEvent("/m?s=1")), "taken by an open session");
        assertEquals(McpErrors.REASON_ENDPOINT_REFUSED, other.answer().streamReason());
        assertEquals("docs", docsAt("/m?s=1").name());
    }

    @Test
    void registrationsAreBounded() {
        McpServer docs = gate.serverAt("http", "mcp.test", 8080, "/sse");
        LegacyEndpoints endpoints = new LegacyEndpoints();
        for (int i = 0; i < LegacyEndpoints.MAX_SESSIONS; i++) {
            assertNotNull(endpoints.register(docs, "k" + i, Runnable::run, e -> {}));
        }
        assertNull(endpoints.register(docs, "one more", Runnable::run, e -> {}));
        endpoints.at("k0").close();
        assertNotNull(endpoints.register(docs, "one more", Runnable::run, e -> {}));
    }

    @Test
    void postsToTheEndpointAreDecidedAndRefusalsAreAnsweredOnTheStream() {
        McpExchange stream = stream();
        feed(stream, endpointEvent("/m?s=1"));

        McpExchange denied = post(
                "/m?s=1", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"delete\"}}");
        assertTrue(denied.approved());
        assertEquals(McpErrors.REASON_TOOL_NOT_APPROVED, denied.refusalReason());
        denied.answerOnStream();
        assertEquals(
                List.of("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32001,\"message\":"
                        + "\"tool 'delete' is not approved by the policy (mcp.servers[docs].tools)\"}}\n\n"),
                injected);

        McpExchange elsewhere = post("/m?s=2", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        assertEquals(McpErrors.REASON_SERVER_NOT_APPROVED, elsewhere.refusalReason());
        stream.end();
        McpExchange afterEnd = post("/m?s=1", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        assertEquals(McpErrors.REASON_SERVER_NOT_APPROVED, afterEnd.refusalReason());
    }

    @Test
    void listAnswersOnTheStreamAreFilteredByTheirRequestOrByTheirShape() {
        McpExchange stream = stream();
        feed(stream, endpointEvent("/m?s=1"));
        McpExchange list = post("/m?s=1", "{\"jsonrpc\":\"2.0\",\"id\":\"l1\",\"method\":\"tools/list\"}");
        assertEquals(false, list.refused());

        String tools =
                "{\"tools\":[{\"name\":\"search\",\"inputSchema\":{}},{\"name\":\"delete\",\"inputSchema\":{}}]}";
        String filtered = "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"search\","
                + "\"inputSchema\":{}}]}}\n\n";
        assertEquals(
                "event: message\n" + filtered.formatted("\"l1\""),
                feed(stream, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"l1\",\"result\":" + tools + "}\n\n"));
        // An id the proxy never saw as a list request (a client and server disagreeing on ids): filtered all the same.
        assertEquals(
                filtered.formatted("99"),
                feed(stream, "data: {\"jsonrpc\":\"2.0\",\"id\":99,\"result\":" + tools + "}\n\n"));
        String call = "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[]}}\n\n";
        assertEquals(call, feed(stream, call));

        List<McpAnswer.StreamMessage> records = stream.answer().takeStreamMessages();
        assertEquals(2, records.size());
        assertEquals(AuditRecord.ALLOW, records.get(0).decision());
        assertEquals("tools/list", records.get(0).details().method());
        assertEquals("l1", records.get(0).details().id());
        assertEquals(1, records.get(0).details().hidden());
        assertEquals("99", records.get(1).details().id());
    }

    @Test
    void pendingListRequestsAreBounded() {
        McpExchange stream = stream();
        feed(stream, endpointEvent("/m?s=1"));
        for (int i = 0; i < LegacySession.MAX_PENDING_LISTS; i++) {
            assertEquals(
                    false,
                    post("/m?s=1", "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/list\"}")
                            .refused());
        }
        McpExchange over = post("/m?s=1", "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"prompts/list\"}");
        assertEquals(McpErrors.REASON_UNINSPECTABLE, over.refusalReason());
        over.answerOnStream();
        assertTrue(injected.getFirst().contains("\"id\":\"x\",\"error\":{\"code\":-32007"), injected.toString());
    }

    @Test
    void everyListOfAResultOnTheStreamIsFilteredWhateverItsId() {
        McpExchange ex = stream();
        String out = feed(
                ex,
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"tools\":[],"
                        + "\"prompts\":[{\"name\":\"evil_prompt\"}]}}\n\n");

        assertEquals(
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"tools\":[],\"prompts\":[]}}\n\n",
                out);
        List<McpAnswer.StreamMessage> records = ex.answer().takeStreamMessages();
        assertEquals(
                List.of("tools/list", "prompts/list"),
                records.stream().map(m -> m.details().method()).toList());
        assertEquals(1, records.get(1).details().hidden());
        ex.end();
    }
}
