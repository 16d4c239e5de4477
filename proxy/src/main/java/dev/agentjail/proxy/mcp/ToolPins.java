package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Rug-pull protection: the definition of each approved tool (name, description, input schema in canonical JSON) is
 * pinned by its SHA-256 the first time a {@code tools/list} shows it, per server, for the proxy's lifetime. A later
 * list with another definition marks the tool changed; a changed tool stays blocked until the proxy restarts, even if
 * its definition changes back. Bounded: past {@value #MAX_TOOLS_PER_SERVER} pinned tools per server, new tools are
 * treated as changed (hidden and blocked).
 */
public final class ToolPins {
    static final int MAX_TOOLS_PER_SERVER = 4096;

    /** What a listing of one tool means for its pin. */
    public enum Seen {
        /** First sight: pinned now. */
        PINNED,
        /** Same definition as pinned. */
        SAME,
        /** Another definition than pinned, or blocked since an earlier change. */
        CHANGED
    }

    private final Map<String, Map<String, String>> pins = new ConcurrentHashMap<>();
    private final Set<String> changed = ConcurrentHashMap.newKeySet();

    /** Checks {@code tool} (one element of a {@code tools/list} result) against its pin on {@code server}. */
    public Seen observe(String server, String name, Json.Obj tool) {
        String key = server + "\u0000" + name;
        if (changed.contains(key)) {
            return Seen.CHANGED;
        }
        String hash = hash(name, tool);
        Map<String, String> serverPins = pins.computeIfAbsent(server, s -> new ConcurrentHashMap<>());
        String pinned = serverPins.get(name);
        if (pinned == null) {
            if (serverPins.size() >= MAX_TOOLS_PER_SERVER) {
                return Seen.CHANGED;
            }
            pinned = serverPins.putIfAbsent(name, hash);
            if (pinned == null) {
                return Seen.PINNED;
            }
        }
        if (pinned.equals(hash)) {
            return Seen.SAME;
        }
        changed.add(key);
        return Seen.CHANGED;
    }

    /** Whether calls to {@code name} on {@code server} are blocked because its definition changed. */
    public boolean blocked(String server, String name) {
        return changed.contains(server + "\u0000" + name);
    }

    /** SHA-256 (hex) of the canonical JSON of the tool's name, description and input schema. */
    static String hash(String name, Json.Obj tool) {
        LinkedHashMap<String, Json> pinned = new LinkedHashMap<>();
        pinned.put("name", new Json.Str(name));
        Json description = tool.get("description");
        pinned.put("description", description == null ? Json.Null.INSTANCE : description);
        Json schema = tool.get("inputSchema");
        pinned.put("inputSchema", schema == null ? Json.Null.INSTANCE : schema);
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            return HexFormat.of()
                    .formatHex(sha.digest(new Json.Obj(pinned).canonical().getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
