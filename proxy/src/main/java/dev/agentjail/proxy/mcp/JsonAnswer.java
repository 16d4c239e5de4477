package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A JSON answer from an approved MCP server: its head held back, its body collected up to a cap, then filtered
 * message by message (one message or a batch, as the TypeScript SDK accepts both) by the same rewriter as an event
 * stream's messages.
 */
final class JsonAnswer {
    /** Why a collected answer cannot be sent on: its reason code and, as the message, why. */
    static final class Unfilterable extends Exception {
        private final String reason;

        Unfilterable(String reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }

        String reason() {
            return reason;
        }
    }

    private final HttpResponse head;
    private final int cap;
    private byte[] bytes = new byte[0];
    private int length;

    JsonAnswer(HttpResponse head, int cap) {
        this.head = head;
        this.cap = cap;
    }

    HttpResponse head() {
        return head;
    }

    /** Collects one part (and releases it); false when the answer would pass the cap. */
    boolean collect(HttpContent content) {
        try {
            ByteBuf data = content.content();
            int n = data.readableBytes();
            if ((long) length + n > cap) {
                bytes = null;
                return false;
            }
            if (length + n > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(length + n, Math.min(cap, bytes.length * 2 + 1024)));
            }
            data.getBytes(data.readerIndex(), bytes, length, n);
            length += n;
            return true;
        } finally {
            content.release();
        }
    }

    /**
     * The answer to send: its own bytes when nothing changed, the rewritten messages otherwise, nothing for a body of
     * only whitespace (no message in it: a legacy message endpoint's empty 200, an answer to a notification).
     */
    byte[] filtered(SseFilter.Rewriter rewriter) throws Unfilterable {
        try {
            if (blank()) {
                return new byte[0];
            }
            Json value = JsonReader.parse(bytes, 0, length);
            Json out;
            if (value instanceof Json.Arr batch) {
                List<Json> kept = new ArrayList<>();
                boolean same = true;
                for (Json item : batch.items()) {
                    Json.Obj rewritten = rewriter.rewrite(RpcMessage.of(item));
                    same &= rewritten == item;
                    if (rewritten != null) {
                        kept.add(rewritten);
                    }
                }
                out = same ? value : kept.isEmpty() ? null : new Json.Arr(kept);
            } else {
                out = rewriter.rewrite(RpcMessage.of(value));
            }
            if (out == null) {
                throw new Unfilterable(
                        McpErrors.REASON_RESPONSE_REFUSED,
                        "the MCP server's response holds only server requests the policy drops");
            }
            return out == value ? Arrays.copyOf(bytes, length) : out.text().getBytes(StandardCharsets.UTF_8);
        } catch (JsonException | RpcMessage.InvalidMessage e) {
            throw new Unfilterable(
                    McpErrors.REASON_UNINSPECTABLE,
                    "the MCP server's response is not strict JSON-RPC: " + e.getMessage());
        } finally {
            bytes = null;
        }
    }

    private boolean blank() {
        for (int i = 0; i < length; i++) {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return false;
            }
        }
        return true;
    }
}
