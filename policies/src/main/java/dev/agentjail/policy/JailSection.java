package dev.agentjail.policy;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code jail} section of a policy into {@link JailSettings}; a missing key keeps its default. */
final class JailSection {
    static final Set<String> KEYS = Set.of("hostname", "new_session", "share_timezone");

    private final YamlNodes nodes;

    JailSection(YamlNodes nodes) {
        this.nodes = nodes;
    }

    JailSettings read(Node jail) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(jail, "jail", KEYS);
        JailSettings defaults = JailSettings.defaults();
        String hostname = defaults.hostname();
        Node hostnameNode = entries.get("hostname");
        if (hostnameNode != null) {
            hostname = nodes.string(hostnameNode, "jail.hostname");
            Optional<String> problem = JailSettings.hostnameProblem(hostname);
            if (problem.isPresent()) {
                throw nodes.error(
                        hostnameNode,
                        "jail.hostname",
                        "invalid hostname " + Quoting.quote(hostname) + ": " + problem.get());
            }
        }
        boolean newSession = flag(entries.get("new_session"), "jail.new_session", defaults.newSession());
        boolean shareTimezone = flag(entries.get("share_timezone"), "jail.share_timezone", defaults.shareTimezone());
        return new JailSettings(hostname, newSession, shareTimezone);
    }

    private boolean flag(Node node, String path, boolean fallback) throws PolicyException {
        return node == null ? fallback : nodes.bool(node, path);
    }
}
