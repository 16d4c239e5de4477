package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Member names as MCP servers match them. Go's {@code encoding/json} (mark3labs/mcp-go, most hand-written Go servers)
 * matches a field name ignoring case, with Unicode's simple folding ({@code ſ} is {@code s}, the Kelvin sign is
 * {@code k}), and takes the last of several that match: {@code {"name":"search","NAME":"delete_repo"}} is a call of
 * {@code delete_repo} there. So detection compares names folded, and a message to an approved server whose names could
 * be read another way is refused.
 */
final class McpNames {
    private static final Set<String> TOP = Set.of("jsonrpc", "id", "method", "params", "result", "error");
    private static final Set<String> PARAMS = Set.of("name", "uri", "arguments");

    private McpNames() {}

    /** {@code name} folded as Go's {@code strings.EqualFold} compares it. */
    static String fold(String name) {
        StringBuilder out = new StringBuilder(name.length());
        name.codePoints().forEach(c -> out.appendCodePoint(Character.toLowerCase(Character.toUpperCase(c))));
        return out.toString();
    }

    /** Whether {@code name} matches {@code lower} (an ASCII lower-case name) as a case-folding decoder matches it. */
    static boolean matches(String name, String lower) {
        return name != null
                && (name.equals(lower)
                        || (name.length() <= 2 * lower.length() && fold(name).equals(lower)));
    }

    /**
     * Why a message's member names could be read another way, or null: two names of the message or of its params
     * that fold to the same name, or a name that folds to one of the protocol's (jsonrpc, id, method, params; name, uri,
     * arguments of the params) without being it.
     */
    static String ambiguity(Json message) {
        if (!(message instanceof Json.Obj top)) {
            return null;
        }
        String problem = ambiguity(top, TOP);
        if (problem == null && top.get("params") instanceof Json.Obj params) {
            problem = ambiguity(params, PARAMS);
        }
        return problem;
    }

    private static String ambiguity(Json.Obj object, Set<String> known) {
        Map<String, String> byFold = new HashMap<>();
        for (String name : List.copyOf(object.members().keySet())) {
            String folded = fold(name);
            String other = byFold.putIfAbsent(folded, name);
            if (other != null) {
                return "member names that differ only in case (" + McpGate.printable(other) + " and "
                        + McpGate.printable(name) + ")";
            }
            if (known.contains(folded) && !known.contains(name)) {
                return "member name " + McpGate.printable(name) + " where the protocol's is " + folded;
            }
        }
        return null;
    }
}
