package dev.agentjail.proxy;

import dev.agentjail.proxy.route.Router;
import dev.agentjail.proxy.tls.UpstreamTls;
import io.netty.channel.ChannelPipeline;

/**
 * The stages a request goes through on a client connection, one job each, in order: request framing ({@code
 * StrictRequestDecoder}, added before these), one request at a time ({@link RequestSequencer}), the decision on its
 * head ({@link RequestIntake}: routing, policy, head inspection), body decoding and scanning ({@link BodyScanner}),
 * the MCP request gate ({@link McpRequestGate}), and the {@link ExchangeHandler}, which dials and forwards. On the
 * upstream connection ({@link UpstreamConnection}) the response goes through framing, the MCP response filter ({@link
 * McpResponseFilter}) and, last, credential scrubbing ({@link ResponseScrubbing}) to the {@link ResponseRelay}. A stage
 * passes its verdicts on as {@link ExchangeSignal}s. A new decoding of request bodies belongs in the body scanner's
 * {@code OutboundRequest}; a new check of a whole request head, in the intake.
 */
final class ClientPipeline {
    private ClientPipeline() {}

    /**
     * Adds the request stages and the exchange handler behind {@code encoder}: requests go through {@code router} to upstreams
     * reached over {@code upstreamTls} (null: plain); {@code spare} is an upstream connection already dialled for the
     * first request, or null.
     */
    static void install(
            ChannelPipeline p,
            ProxyRuntime runtime,
            ProxyResponseEncoder encoder,
            Router router,
            UpstreamTls upstreamTls,
            UpstreamConnection spare) {
        RequestSequencer sequencer = new RequestSequencer();
        p.addLast(RequestSequencer.NAME, sequencer)
                .addLast(RequestIntake.NAME, new RequestIntake(runtime, router))
                .addLast(BodyScanner.NAME, new BodyScanner())
                .addLast(McpRequestGate.NAME, new McpRequestGate())
                .addLast(ExchangeHandler.NAME, new ExchangeHandler(runtime, encoder, sequencer, upstreamTls, spare));
    }

    /** Removes what {@link #install} added: the connection becomes a tunnel. */
    static void uninstall(ChannelPipeline p) {
        p.remove(ExchangeHandler.NAME);
        p.remove(McpRequestGate.NAME);
        p.remove(BodyScanner.NAME);
        p.remove(RequestIntake.NAME);
        p.remove(RequestSequencer.NAME);
    }
}
