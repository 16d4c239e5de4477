package dev.agentjail.proxy.mcp.host;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import dev.agentjail.proxy.mcp.McpErrors;
import dev.agentjail.proxy.mcp.RpcMessage;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One MCP session with a host-side server: its own child process, the requests waiting for their responses, the
 * GET stream, and the server's messages that arrived while no stream was open. All state lives on {@code loop}.
 */
final class McpSession implements ChildProcess.Listener {
    static final int MAX_PENDING = 64;
    static final int MAX_BACKLOG = 64;

    private static final Logger LOG = LoggerFactory.getLogger(McpSession.class);

    private final String id;
    private final HostServer server;
    private final EventLoop loop;
    private final Map<String, PendingRequest> pending = new LinkedHashMap<>();
    private final ArrayDeque<byte[]> backlog = new ArrayDeque<>();
    private ChildProcess child;
    private EventStream stream;
    private boolean ended;
    private String endReason;

    /** A request waiting for its response; {@code onClose} forgets it if the client goes away first. */
    private record PendingRequest(Json id, PostAnswer answer, ChannelFutureListener onClose) {
        /** The request is answered (or abandoned): a kept-alive connection must not collect listeners. */
        void settled() {
            answer.channel().closeFuture().removeListener(onClose);
        }
    }

    McpSession(String id, HostServer server, EventLoop loop) {
        this.id = id;
        this.server = server;
        this.loop = loop;
    }

    String id() {
        return id;
    }

    EventLoop loop() {
        return loop;
    }

    /** The process, once started (tests read its pid). */
    ChildProcess child() {
        return child;
    }

    /** On the loop: the process is running. */
    void attach(ChildProcess child) {
        this.child = child;
    }

    boolean ended() {
        return ended;
    }

    // ---- from the client (on the loop) ----

    /** A request: sent to the server, answered when its response comes back (or the server goes away). */
    void request(RpcMessage message, byte[] line, PostAnswer answer) {
        if (ended) {
            answer.complete(error(message.id(), HostErrors.EXITED, "the host-side MCP server " + endReason));
            return;
        }
        if (pending.size() >= MAX_PENDING) {
            answer.complete(error(
                    message.id(), HostErrors.UNAVAILABLE, "more than " + MAX_PENDING + " requests are in flight"));
            return;
        }
        String key = key(message.id());
        if (pending.containsKey(key)) {
            answer.complete(error(message.id(), McpErrors.INVALID_REQUEST, "a request with this id is in flight"));
            return;
        }
        ChannelFutureListener onClose = f -> loop.execute(() -> forget(key, answer));
        PendingRequest request = new PendingRequest(message.id(), answer, onClose);
        pending.put(key, request);
        answer.channel().closeFuture().addListener(onClose);
        if (!child.write(line)) {
            pending.remove(key);
            request.settled();
            answer.complete(
                    error(message.id(), HostErrors.EXITED, "the host-side MCP server is not reading its input"));
        }
    }

    /** A notification or a response to the server's request: false when it cannot be delivered. */
    boolean send(byte[] line) {
        return !ended && child.write(line);
    }

    /** A GET: the stream for the server's unsolicited messages; false when one is open already. */
    boolean openStream(EventStream s) {
        if (stream != null && stream.open()) {
            return false;
        }
        stream = s;
        byte[] message;
        while ((message = backlog.poll()) != null) {
            s.event(message);
        }
        return true;
    }

    /** DELETE or the proxy's shutdown: no new request is accepted, and the process is stopped. */
    void end() {
        server.remove(this);
        if (child != null) {
            child.stop();
        }
    }

    // ---- from the server (reader thread) ----

    @Override
    public void onLine(byte[] line) {
        RpcMessage message;
        byte[] compact;
        try {
            Json value = JsonReader.parse(line);
            message = RpcMessage.of(value);
            // Re-written compact: one line, no raw control character, so it is one SSE data line.
            compact = value.text().getBytes(StandardCharsets.UTF_8);
        } catch (JsonException | RpcMessage.InvalidMessage e) {
            LOG.debug("host-side MCP server {} wrote a line that is not a JSON-RPC message; dropped", server.name());
            return;
        }
        loop.execute(() -> deliver(message, compact));
    }

    @Override
    public void onExit(String why) {
        loop.execute(() -> exited(why));
    }

    private void deliver(RpcMessage message, byte[] json) {
        if (message.kind() == RpcMessage.Kind.RESPONSE) {
            PendingRequest p = pending.remove(key(message.id()));
            if (p != null) {
                p.settled();
                p.answer().complete(json);
            }
            return;
        }
        for (PendingRequest p : pending.values()) {
            if (!p.answer().done()) {
                p.answer().event(json);
                return;
            }
        }
        if (stream != null && stream.open()) {
            stream.event(json);
        } else if (backlog.size() < MAX_BACKLOG) {
            backlog.add(json);
        } else {
            LOG.debug("host-side MCP server {}: no stream open, message dropped", server.name());
        }
    }

    private void exited(String why) {
        if (ended) {
            return;
        }
        ended = true;
        endReason = why;
        server.remove(this);
        if (why.startsWith("was stopped")) {
            LOG.debug("host-side MCP server {} (session ended) stopped", server.name());
        } else {
            LOG.warn("host-side MCP server {} {}", server.name(), why);
            // The tail may hold anything the server printed, tokens included: debug only, never to the jail.
            if (child != null) {
                LOG.debug("host-side MCP server {} stderr tail:\n{}", server.name(), child.stderrTail());
            }
        }
        for (PendingRequest p : pending.values()) {
            p.settled();
            p.answer().complete(error(p.id(), HostErrors.EXITED, "the host-side MCP server " + why));
        }
        pending.clear();
        if (stream != null) {
            stream.end();
        }
        backlog.clear();
    }

    private void forget(String key, PostAnswer answer) {
        PendingRequest p = pending.get(key);
        if (p != null && p.answer() == answer) {
            pending.remove(key);
        }
    }

    private byte[] error(Json id, int code, String message) {
        return McpErrors.errorBody(id, code, "'" + server.name() + "': " + message);
    }

    /** Ids compare by type and text: the string "1" and the number 1 are different requests. */
    private static String key(Json id) {
        return id instanceof Json.Str s ? "s" + s.value() : "n" + ((Json.Num) id).literal();
    }
}
