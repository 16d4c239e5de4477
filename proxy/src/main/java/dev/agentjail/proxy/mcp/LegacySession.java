package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.McpServer;
import dev.agentjail.proxy.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * One session of MCP's legacy HTTP+SSE transport (2024-11-05) as the proxy sees it: the message endpoint its event
 * stream announced, the list requests POSTed to it whose answers will come on the stream, and a way to put an event
 * on that stream. It lives exactly as long as the proxy relays the stream. The stream's side runs on its event loop,
 * the POSTs on theirs: the pending lists are a concurrent map, and events are handed to the stream's loop.
 */
public final class LegacySession {
    /** List requests that may await their answer at once; past that, further list requests are refused. */
    static final int MAX_PENDING_LISTS = 256;

    private final McpServer server;
    private final String key;
    private final LegacyEndpoints registry;
    private final Executor streamLoop;
    private final Consumer<byte[]> streamWriter;
    private final Map<String, String> pendingLists = new ConcurrentHashMap<>();
    private volatile boolean closed;

    LegacySession(
            McpServer server,
            String key,
            LegacyEndpoints registry,
            Executor streamLoop,
            Consumer<byte[]> streamWriter) {
        this.server = server;
        this.key = key;
        this.registry = registry;
        this.streamLoop = streamLoop;
        this.streamWriter = streamWriter;
    }

    McpServer server() {
        return server;
    }

    String key() {
        return key;
    }

    boolean closed() {
        return closed;
    }

    /**
     * Notes that the list request {@code id} (method {@code method}) goes to the server, so that its answer on the
     * stream is filtered; false when too many are pending already (the request must then be refused).
     */
    boolean expectList(Json id, String method) {
        if (pendingLists.size() >= MAX_PENDING_LISTS) {
            return false;
        }
        // A list request keeps its place even if the client reuses the id: its answer must still be filtered.
        pendingLists.putIfAbsent(id.text(), method);
        return true;
    }

    /** The list method whose answer {@code id} is, forgotten now; null when no list request has this id. */
    String answered(Json id) {
        return pendingLists.remove(id.text());
    }

    /**
     * Puts the JSON-RPC message {@code message} on the session's stream as a {@code message} event, as the server
     * would: legacy clients read answers only from the stream. Does nothing once the stream ended.
     */
    void send(byte[] message) {
        if (closed) {
            return;
        }
        byte[] head = "event: message\ndata: ".getBytes(StandardCharsets.US_ASCII);
        byte[] event = new byte[head.length + message.length + 2];
        System.arraycopy(head, 0, event, 0, head.length);
        System.arraycopy(message, 0, event, head.length, message.length);
        event[event.length - 2] = '\n';
        event[event.length - 1] = '\n';
        streamLoop.execute(() -> {
            if (!closed) {
                streamWriter.accept(event);
            }
        });
    }

    /** The stream ended: the message endpoint is no longer approved. */
    void close() {
        closed = true;
        registry.remove(this);
        pendingLists.clear();
    }
}
