package dev.agentjail.proxy.mcp;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Streamable HTTP sessions each approved server issued through this proxy (the {@code Mcp-Session-Id} of its
 * answer to {@code initialize}), so that only those are passed to it (corpus case 149): one proxy serves one jail, so a
 * session id from anywhere else (another jail, another run, a guess) is unknown here. Ids are kept as SHA-256 hashes,
 * never raw; at most {@value #MAX_PER_SERVER} per server, the least recently used dropped first. One per proxy;
 * thread-safe.
 */
final class SessionBinding {
    /** Sessions remembered per server; past that, the least recently used one is forgotten (its client re-initializes). */
    static final int MAX_PER_SERVER = 1024;

    private final Map<String, Map<String, Boolean>> issued = new ConcurrentHashMap<>();

    /** Server {@code server} issued the session whose id hashes to {@code hash} (see {@link #hash}). */
    void issued(String server, String hash) {
        Map<String, Boolean> sessions = issued.computeIfAbsent(server, s -> lru());
        synchronized (sessions) {
            sessions.put(hash, Boolean.TRUE);
        }
    }

    /** Whether {@code server} issued the session {@code hash} through this proxy and it has not ended. */
    boolean known(String server, String hash) {
        Map<String, Boolean> sessions = issued.get(server);
        if (sessions == null) {
            return false;
        }
        synchronized (sessions) {
            // get() also marks it used: an active session is not the one dropped.
            return sessions.get(hash) != null;
        }
    }

    /** The session ended (the client deleted it, or the server said it is gone): it is refused from now on. */
    void forget(String server, String hash) {
        Map<String, Boolean> sessions = issued.get(server);
        if (sessions != null) {
            synchronized (sessions) {
                sessions.remove(hash);
            }
        }
    }

    /** How many sessions of {@code server} are remembered. */
    int size(String server) {
        Map<String, Boolean> sessions = issued.get(server);
        if (sessions == null) {
            return 0;
        }
        synchronized (sessions) {
            return sessions.size();
        }
    }

    /** SHA-256 (hex) of a session id: what is kept, compared and, should anything ever record it, recorded. */
    static String hash(String sessionId) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256")
                            .digest(sessionId.getBytes(StandardCharsets.ISO_8859_1)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    private static Map<String, Boolean> lru() {
        return new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > MAX_PER_SERVER;
            }
        };
    }
}
