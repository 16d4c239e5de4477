package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.McpServer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The message endpoints of the legacy HTTP+SSE sessions open through the proxy: each exact scheme, host, port, path
 * and query an approved server's event stream announced, while that stream lasts. Bounded by {@value #MAX_SESSIONS};
 * one per proxy, thread-safe.
 */
final class LegacyEndpoints {
    /** Legacy sessions open at once, over all servers; past that, a new stream's endpoint is refused. */
    static final int MAX_SESSIONS = 1024;

    private final Map<String, LegacySession> sessions = new ConcurrentHashMap<>();

    /** The key of a message endpoint: canonical host, port and the exact path and query. */
    static String key(String scheme, String host, int port, String pathAndQuery) {
        return scheme + "://" + host + ":" + port + " " + pathAndQuery;
    }

    /**
     * Registers the endpoint {@code key} for {@code server}'s stream: a new session, or null when the endpoint is taken
     * by another open session or too many sessions are open.
     */
    synchronized LegacySession register(
            McpServer server, String key, Executor streamLoop, Consumer<byte[]> streamWriter) {
        // Registration is rare (once per stream) and checks the bound: one at a time.
        if (sessions.size() >= MAX_SESSIONS || sessions.containsKey(key)) {
            return null;
        }
        LegacySession session = new LegacySession(server, key, this, streamLoop, streamWriter);
        sessions.put(key, session);
        return session;
    }

    /** The open session whose message endpoint this is, or null. Lock-free and cheap: it runs for every request. */
    LegacySession at(String scheme, String host, int port, String pathAndQuery) {
        return sessions.isEmpty() ? null : at(key(scheme, host, port, pathAndQuery));
    }

    /** The open session whose message endpoint is {@code key}, or null. */
    LegacySession at(String key) {
        if (sessions.isEmpty()) {
            return null;
        }
        LegacySession session = sessions.get(key);
        return session == null || session.closed() ? null : session;
    }

    void remove(LegacySession session) {
        sessions.remove(session.key(), session);
    }

    int size() {
        return sessions.size();
    }
}
