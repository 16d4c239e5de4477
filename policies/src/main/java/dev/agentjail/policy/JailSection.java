package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code jail} section of a policy into {@link JailSettings}; a missing key keeps its default. */
final class JailSection {
    static final Set<String> KEYS = Set.of("hostname", "new_session", "share_timezone", "devices", "pre_start");

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
        return new JailSettings(
                hostname,
                newSession,
                shareTimezone,
                devices(entries.get("devices")),
                preStart(entries.get("pre_start")));
    }

    private Set<JailSettings.Device> devices(Node node) throws PolicyException {
        Set<JailSettings.Device> devices = EnumSet.noneOf(JailSettings.Device.class);
        if (node == null) {
            return devices;
        }
        List<Node> items = nodes.sequence(node, "jail.devices");
        for (int i = 0; i < items.size(); i++) {
            String path = "jail.devices[" + i + "]";
            String name = nodes.string(items.get(i), path);
            JailSettings.Device device = switch (name) {
                case "gpu" -> JailSettings.Device.GPU;
                case "camera" -> JailSettings.Device.CAMERA;
                case "audio" -> JailSettings.Device.AUDIO;
                default ->
                    throw nodes.error(
                            items.get(i),
                            path,
                            "unknown device " + Quoting.quote(name) + " (expected gpu, camera or audio)");
            };
            devices.add(device);
        }
        return devices;
    }

    private List<String> preStart(Node node) throws PolicyException {
        List<String> commands = new ArrayList<>();
        if (node == null) {
            return commands;
        }
        List<Node> items = nodes.sequence(node, "jail.pre_start");
        for (int i = 0; i < items.size(); i++) {
            String path = "jail.pre_start[" + i + "]";
            String command = nodes.string(items.get(i), path);
            if (command.isBlank()) {
                throw nodes.error(items.get(i), path, "empty command");
            }
            if (command.indexOf('\0') >= 0) {
                throw nodes.error(items.get(i), path, "NUL is not allowed");
            }
            commands.add(command);
        }
        return commands;
    }

    private boolean flag(Node node, String path, boolean fallback) throws PolicyException {
        return node == null ? fallback : nodes.bool(node, path);
    }
}
