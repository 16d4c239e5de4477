package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.McpServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Recognises tool shadowing across servers (corpus case 148): an approved tool whose description names a tool of
 * another approved server of this proxy, as a whole word (case-insensitive), which is how one server's description
 * steers the agent's use of another server's tool. The tools known per server are the names its policy approves
 * literally (no {@code *}) and every approved tool a list of it has shown. Names shorter than {@value #MIN_NAME}
 * characters are ignored: they are too often plain words. Flagged tools are recorded, not hidden. One per proxy;
 * thread-safe.
 */
final class ToolShadowing {
    /** Shorter tool names are not looked for. */
    static final int MIN_NAME = 4;

    /** At most this many shadowed tools are named per flagged tool. */
    static final int MAX_PER_TOOL = 4;

    /** A tool name can have at most this many {@code .}-separated segments to be found. */
    private static final int MAX_SEGMENTS = 4;

    /** One tool of one server. */
    private record Ref(String server, String tool) {}

    /** Lower-case tool name to the servers' tools of that name. */
    private final Map<String, Set<Ref>> known = new ConcurrentHashMap<>();

    /** With a single server there is nothing to shadow: descriptions are not even read. */
    private final boolean several;

    /** Knows the names each server's policy approves literally. */
    ToolShadowing(List<McpServer> servers) {
        this.several = servers.size() > 1;
        for (McpServer server : servers) {
            for (String pattern : server.tools().allow()) {
                if (pattern.indexOf('*') < 0 && server.tools().permits(pattern)) {
                    known(server.name(), pattern);
                }
            }
        }
    }

    /** {@code server} has the approved tool {@code tool} (a list showed it). */
    void known(String server, String tool) {
        if (tool.length() >= MIN_NAME && McpGate.validToolName(tool)) {
            known.computeIfAbsent(tool.toLowerCase(Locale.ROOT), n -> ConcurrentHashMap.newKeySet())
                    .add(new Ref(server, tool));
        }
    }

    /**
     * The tools of servers other than {@code server} that {@code description} (of {@code server}'s tool {@code
     * tool}) names, as {@code shadowing:<server>.<tool>}, at most {@value #MAX_PER_TOOL}; empty when none.
     */
    List<String> shadowed(String server, String tool, String description) {
        if (!several || known.isEmpty()) {
            return List.of();
        }
        List<String> out = new ArrayList<>(0);
        int n = description.length();
        int i = 0;
        while (i < n && out.size() < MAX_PER_TOOL) {
            if (!nameChar(description.charAt(i))) {
                i++;
                continue;
            }
            int start = i;
            while (i < n && nameChar(description.charAt(i))) {
                i++;
            }
            if (i - start >= MIN_NAME) {
                word(server, tool, description.substring(start, i), out);
            }
        }
        return out;
    }

    /**
     * One run of tool-name characters: the whole run and every run of up to {@value #MAX_SEGMENTS} of its {@code
     * .}-separated segments are candidate names ({@code github.send_email.} names {@code send_email}).
     */
    private void word(String server, String tool, String word, List<String> out) {
        String lower = word.toLowerCase(Locale.ROOT);
        if (lower.indexOf('.') < 0) {
            match(server, tool, lower, out);
            return;
        }
        String[] segments = lower.split("\\.", -1);
        for (int from = 0; from < segments.length; from++) {
            StringBuilder name = new StringBuilder();
            for (int to = from; to < segments.length && to < from + MAX_SEGMENTS; to++) {
                if (to > from) {
                    name.append('.');
                }
                name.append(segments[to]);
                if (name.length() >= MIN_NAME) {
                    match(server, tool, name.toString(), out);
                }
            }
        }
    }

    private void match(String server, String tool, String lowerName, List<String> out) {
        Set<Ref> refs = known.get(lowerName);
        if (refs == null) {
            return;
        }
        for (Ref ref : refs) {
            // A tool's description naming itself is not shadowing, even when another server has a tool so named.
            if (!ref.server().equals(server) && !ref.tool().equalsIgnoreCase(tool) && out.size() < MAX_PER_TOOL) {
                String flag = "shadowing:" + ref.server() + "." + ref.tool();
                if (!out.contains(flag)) {
                    out.add(flag);
                }
            }
        }
    }

    /** Letters, digits, {@code _ - .}: the characters of a tool name. */
    private static boolean nameChar(char c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '_'
                || c == '-'
                || c == '.';
    }
}
