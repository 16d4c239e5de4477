package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import dev.agentjail.proxy.json.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * Filters the result of a {@code tools/list}, {@code resources/list}, {@code resources/templates/list} or {@code
 * prompts/list} so the agent sees only what the server's filters approve; tools are also checked against their pins,
 * and a tool whose definition changed is hidden.
 */
final class ListFilter {
    /**
     * The message to pass on, how many entries were hidden, which tools changed since pinned, and which approved
     * tools are flagged: a tool's name for marks of poisoning ({@link ToolPoisoning}); {@code <name>
     * shadowing:<server>.<tool>} for a description that names another server's tool ({@link ToolShadowing}).
     */
    record Filtered(Json.Obj message, int hidden, List<String> changed, List<String> flagged) {}

    private ListFilter() {}

    /** Whether responses to {@code method} are filtered. */
    static boolean filters(String method) {
        return spec(method) != null;
    }

    /** The list methods, in the order their arrays are filtered. */
    private static final List<String> LISTS =
            List.of("tools/list", "resources/templates/list", "resources/list", "prompts/list");

    /**
     * The list methods whose result {@code message} has the array of, whatever its id: a {@code tools}, {@code
     * resourceTemplates}, {@code resources} or {@code prompts} array (no other MCP result has one). Every one of
     * them, so that each is filtered by its own filter: a client that takes the message as the answer to one list
     * request does not say which array it reads. Empty when it has none.
     */
    static List<String> listMethodsOf(Json.Obj message) {
        if (!(message.get("result") instanceof Json.Obj result)) {
            return List.of();
        }
        List<String> out = new ArrayList<>(1);
        for (String list : LISTS) {
            if (result.get(spec(list).array()) instanceof Json.Arr) {
                out.add(list);
            }
        }
        return out;
    }

    private record Spec(String array, String key, boolean tools) {}

    private static Spec spec(String method) {
        if (method == null) {
            return null;
        }
        return switch (method) {
            case "tools/list" -> new Spec("tools", "name", true);
            case "resources/list" -> new Spec("resources", "uri", false);
            case "resources/templates/list" -> new Spec("resourceTemplates", "uriTemplate", false);
            case "prompts/list" -> new Spec("prompts", "name", false);
            default -> null;
        };
    }

    static Filtered filter(McpGate gate, McpServer server, String method, Json.Obj message) {
        Spec spec = spec(method);
        if (spec == null || !(message.get("result") instanceof Json.Obj result)) {
            return new Filtered(message, 0, List.of(), List.of());
        }
        if (!(result.get(spec.array()) instanceof Json.Arr items)) {
            return new Filtered(message, 0, List.of(), List.of());
        }
        NameFilter filter = switch (spec.array()) {
            case "tools" -> server.tools();
            case "prompts" -> server.prompts();
            default -> server.resources();
        };
        List<Json> kept = new ArrayList<>();
        List<String> changed = new ArrayList<>();
        List<String> flagged = new ArrayList<>();
        int hidden = 0;
        for (Json item : items.items()) {
            String name = item instanceof Json.Obj o ? o.string(spec.key()) : null;
            boolean ok = name != null && filter.permits(name) && (!spec.tools() || McpGate.validToolName(name));
            if (ok && spec.tools()) {
                Json.Obj tool = (Json.Obj) item;
                ToolPins.Seen seen = gate.pins().observe(server.name(), name, tool);
                if (seen == ToolPins.Seen.CHANGED) {
                    ok = false;
                    changed.add(name);
                } else {
                    if (seen == ToolPins.Seen.PINNED) {
                        gate.shadowing().known(server.name(), name);
                    }
                    if (ToolPoisoning.flagged(tool)) {
                        flagged.add(name);
                    }
                    if (tool.get("description") instanceof Json.Str d) {
                        for (String shadowed : gate.shadowing().shadowed(server.name(), name, d.value())) {
                            flagged.add(name + " " + shadowed);
                        }
                    }
                }
            }
            if (ok) {
                kept.add(item);
            } else {
                hidden++;
            }
        }
        if (hidden == 0) {
            return new Filtered(message, 0, changed, flagged);
        }
        Json.Obj filtered = message.with("result", result.with(spec.array(), new Json.Arr(kept)));
        return new Filtered(filtered, hidden, changed, flagged);
    }
}
