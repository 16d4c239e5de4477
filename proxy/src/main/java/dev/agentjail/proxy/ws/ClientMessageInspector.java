package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.ProxyReasons;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Redacts what the client sends before it goes on: a text message is redacted like a JSON body (markers of the same
 * length); a binary message, and under {@code redaction.action: block} any message, that carries a secret fails the
 * connection with close code 1008 instead, since markers in opaque bytes would corrupt them silently. Ping, pong and
 * close payloads are client text too: redacted (a close frame's status code is kept), or blocked in block mode.
 */
public final class ClientMessageInspector extends ChannelInboundHandlerAdapter {
    public static final String NAME = "ws-client-inspector";
    public static final String LOCATION_TEXT = "websocket-text";
    public static final String LOCATION_BINARY = "websocket-binary";
    public static final String LOCATION_CONTROL = "websocket-control";

    private final MessageRedaction redaction;
    private final WsLedger ledger;

    public ClientMessageInspector(MessageRedaction redaction, WsLedger ledger) {
        this.redaction = redaction;
        this.ledger = ledger;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof WsMessage m)) {
            ctx.fireChannelRead(msg);
            return;
        }
        int op = m.opcode();
        String location =
                op == WsMessage.TEXT ? LOCATION_TEXT : op == WsMessage.BINARY ? LOCATION_BINARY : LOCATION_CONTROL;
        ByteBuf payload = m.content();
        // A close frame's status code is no text: only its reason is scanned.
        int keep = op == WsMessage.CLOSE && payload.readableBytes() >= 2 ? 2 : 0;
        ByteBuf code = payload.readRetainedSlice(keep);
        MessageRedaction.Result r = redaction.redact(payload.retain(), op == WsMessage.TEXT, ctx.alloc());
        m.release();
        if (!r.findings().isEmpty()) {
            ledger.findings(location, r.findings());
        }
        if (r.blocked() || (op == WsMessage.BINARY && !r.findings().isEmpty())) {
            code.release();
            if (r.payload() != null) {
                r.payload().release();
            }
            ctx.fireExceptionCaught(new WsViolation(
                    WsViolation.POLICY,
                    ProxyReasons.WEBSOCKET_SECRET_BLOCKED,
                    "a secret in a " + location.substring("websocket-".length()) + " message to the upstream",
                    true));
            return;
        }
        ByteBuf out = keep == 0 ? r.payload() : ctx.alloc().compositeBuffer(2).addComponents(true, code, r.payload());
        if (keep == 0) {
            code.release();
        }
        ctx.fireChannelRead(m.withPayload(out, false));
    }
}
