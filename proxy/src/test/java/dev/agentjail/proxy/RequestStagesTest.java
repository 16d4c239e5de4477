package dev.agentjail.proxy;

import static dev.agentjail.proxy.StageHarness.last;
import static dev.agentjail.proxy.StageHarness.part;
import static dev.agentjail.proxy.StageHarness.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.http.MalformedRequest;
import dev.agentjail.proxy.mcp.McpExchange;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Each request stage on its own, on an {@link EmbeddedChannel}: what it lets through, what it holds, and the verdicts
 * it passes on in place of messages (the whole path is tested on real sockets elsewhere).
 */
@ExtendWith(NettyLeakGuard.class)
class RequestStagesTest {
    private static final String GITHUB_PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    private static final String POLICY = """
            version: 1
            network:
              allow: ["api.test:80", "mcp.test:80", "other.test:80"]
            mcp:
              servers:
                - name: docs
                  url: http://mcp.test/mcp
                  tools: {allow: ["search*"]}
            """;
    private static final String CALL_SEARCH =
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{}}}";

    // ---- RequestSequencer ----

    @Test
    void theSequencerLetsOneRequestThroughAtATime() {
        RequestSequencer sequencer = new RequestSequencer();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(sequencer, out);

        ch.writeInbound(post("http://api.test/a", "text/plain"), part("a1"), last("a2"));
        ch.writeInbound(post("http://api.test/b", "text/plain"), last("b1"));
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {1}));

        assertEquals(List.of("part:a1", "last:a2"), out.parts());
        assertEquals(3, sequencer.waiting(), "the second request, its body and the raw byte behind it wait");
        assertFalse(ch.config().isAutoRead());

        sequencer.exchangeDone();
        assertEquals(List.of("part:a1", "last:a2", "last:b1"), out.parts());
        assertEquals(0, sequencer.waiting(), "raw bytes belong to the exchange in flight: they pass");
        assertInstanceOf(io.netty.buffer.ByteBuf.class, out.seen.getLast());
        assertTrue(out.events.isEmpty(), "not idle while the second is in flight");

        sequencer.exchangeDone();
        assertEquals(List.of(ClientTimeouts.EXCHANGE_DONE), out.events);
        assertTrue(ch.config().isAutoRead());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aFramingErrorBelongsToTheRequestWhoseBodyItBroke() {
        RequestSequencer sequencer = new RequestSequencer();
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(sequencer, out);
        MalformedRequest broken =
                new MalformedRequest(HttpResponseStatus.BAD_REQUEST, "bad-chunk", "a chunk size is not hex", null);

        ch.writeInbound(post("http://api.test/a", "text/plain"), part("a1"), broken);
        assertEquals(3, out.seen.size(), "head, part and the error went through");
        assertEquals(broken, out.seen.getLast());

        ch.writeInbound(post("http://api.test/b", "text/plain"));
        assertEquals(1, sequencer.waiting(), "a request after the broken one waits for its verdict");
        assertFalse(ch.finishAndReleaseAll());
    }

    // ---- RequestIntake and BodyScanner ----

    @Test
    void theScannerPassesTheRedactedBodyAndCountsWhatTheClientSent() {
        StageHarness h = new StageHarness(POLICY);
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(h.intake(), new BodyScanner(), out);

        String first = "{\"k\":\"" + GITHUB_PAT.substring(0, 10);
        String rest = GITHUB_PAT.substring(10) + "\"}";
        ch.writeInbound(post("http://api.test/v1", "application/json"), part(first), last(rest));

        RequestIntake.Admitted admitted = assertInstanceOf(RequestIntake.Admitted.class, out.seen.getFirst());
        String sent = String.join("", out.parts()).replace("part:", "").replace("last:", "");
        assertFalse(sent.contains(GITHUB_PAT), sent);
        assertTrue(sent.startsWith("{\"k\":\"") && sent.endsWith("\"}"), sent);
        assertEquals(first.length() + rest.length(), admitted.exchange().bytesOut);
        assertTrue(admitted.exchange().requestComplete);
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aBlockedSecretBecomesTheBodyRefusedSignalAndTheRestPassesUnread() {
        StageHarness h = new StageHarness(POLICY + "redaction:\n  action: block\n");
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(h.intake(), new BodyScanner(), out);

        ch.writeInbound(post("http://api.test/v1", "text/plain"), part("x " + GITHUB_PAT + " y"), last("tail"));

        ExchangeSignal.BodyRefused refused =
                out.of(ExchangeSignal.BodyRefused.class).getFirst();
        assertEquals(ProxyReasons.SECRET_BLOCKED, refused.exchange().outbound.refusalReason());
        assertEquals(List.of("last:tail"), out.parts(), "after the refusal the rest passes as it is, to be dropped");
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void theBodyOfARefusedExchangeIsNotScanned() {
        StageHarness h = new StageHarness(POLICY);
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(h.intake(), new BodyScanner(), out);

        ch.writeInbound(post("http://denied.test/v1", "text/plain"), last(GITHUB_PAT));

        assertInstanceOf(RequestIntake.Refused.class, out.seen.getFirst());
        assertEquals(List.of("last:" + GITHUB_PAT), out.parts());
        assertFalse(ch.finishAndReleaseAll());
    }

    // ---- McpRequestGate ----

    @Test
    void theGateHoldsAnMcpBodyUntilItsVerdict() {
        StageHarness h = new StageHarness(POLICY);
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(h.intake(), new BodyScanner(), new McpRequestGate(), out);

        ch.writeInbound(post("http://mcp.test/mcp", "application/json"), part(CALL_SEARCH.substring(0, 30)));
        assertEquals(1, out.seen.size(), "only the outcome: the body is held");

        ch.writeInbound(last(CALL_SEARCH.substring(30)));
        ExchangeSignal.McpReady ready = assertInstanceOf(ExchangeSignal.McpReady.class, out.seen.getLast());
        var body = ready.exchange().mcp.takeBody();
        assertEquals(CALL_SEARCH, body.content().toString(java.nio.charset.StandardCharsets.UTF_8));
        body.release();
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void theGateRefusesAnUnapprovedToolAndMcpElsewhere() {
        StageHarness h = new StageHarness(POLICY);
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(h.intake(), new BodyScanner(), new McpRequestGate(), out);

        ch.writeInbound(post("http://mcp.test/mcp", "application/json"), last(CALL_SEARCH.replace("search", "drop")));
        ch.writeInbound(post("http://other.test/rpc", "text/plain"), last(CALL_SEARCH));

        List<ExchangeSignal.McpRefused> refused = out.of(ExchangeSignal.McpRefused.class);
        assertEquals(2, refused.size());
        assertEquals("mcp-tool-not-approved", refused.get(0).exchange().mcp.refusalReason());
        assertEquals("mcp-server-not-approved", refused.get(1).exchange().mcp.refusalReason());
        assertEquals(List.of(), out.parts(), "no byte of either body went on");
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aBodyDecidedOnItsStartIsFollowedWithItsLatestPartKeptBack() {
        StageHarness h = new StageHarness(POLICY);
        StageHarness.Collector out = new StageHarness.Collector();
        EmbeddedChannel ch = new EmbeddedChannel(h.intake(), new BodyScanner(), new McpRequestGate(), out);
        String start = "{\"pad\":\"" + "p".repeat(McpExchange.SNIFF_BYTES) + "\"";

        ch.writeInbound(post("http://other.test/rpc", "application/json"), part(start));
        assertInstanceOf(ExchangeSignal.McpReady.class, out.seen.getLast(), "the start is no MCP: it goes on");
        int before = out.parts().size();

        ch.writeInbound(part(",\"model\":\"m\""));
        assertEquals(before, out.parts().size(), "kept back until the next part comes");
        ch.writeInbound(part(",\"x\":1"));
        assertEquals(before + 1, out.parts().size());
        ch.writeInbound(part(",\"jsonrpc\":\"2.0\""));
        ch.writeInbound(last("}"));

        ExchangeSignal.McpRefused refused =
                out.of(ExchangeSignal.McpRefused.class).getFirst();
        assertTrue(
                refused.exchange().mcp.refusalDetail().contains("past the first"),
                refused.exchange().mcp.refusalDetail());
        List<String> upToRefusal = out.seen.subList(0, out.seen.indexOf(refused)).stream()
                .filter(String.class::isInstance)
                .map(String.class::cast)
                .toList();
        // The scanner holds back a few bytes of each part, so parts do not end where the client's did: one went on.
        assertEquals(1, upToRefusal.size(), upToRefusal.toString());
        String sent = String.join("", upToRefusal);
        assertFalse(sent.contains("\"x\":1") || sent.contains("jsonrpc"), "kept back, and the finding: " + sent);
        assertTrue(
                String.valueOf(out.seen.getLast()).startsWith("last:"),
                "after the refusal the rest passes, to be dropped");
        assertFalse(ch.finishAndReleaseAll());
    }

    // ---- Exchange.Phase ----

    @Test
    void anExchangeTakesOnlyTheStepsItCan() {
        StageHarness h = new StageHarness(POLICY);
        Exchange ex = ((RequestIntake.Admitted) h.intake().admit(post("http://api.test/v1", "text/plain"))).exchange();
        assertThrows(IllegalStateException.class, () -> ex.to(Exchange.FORWARDING), "forwarded before it was dialled");
        ex.to(Exchange.DIALING);
        assertThrows(IllegalStateException.class, () -> ex.to(Exchange.COLLECTING), "collected after it was dialled");
        ex.to(Exchange.FORWARDING);
        ex.to(Exchange.DISCARDING);
        assertTrue(ex.discarding());
        assertThrows(IllegalStateException.class, () -> ex.to(Exchange.DIALING), "a refused exchange goes nowhere");
    }
}
