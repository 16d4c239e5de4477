package dev.agentjail.policy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code tls} section of a policy into {@link TlsSettings}, checking that each CA file can be read. */
final class TlsSection {
    static final Set<String> KEYS = Set.of("upstream_ca");

    private final YamlNodes nodes;
    private final PolicyFiles files;

    TlsSection(YamlNodes nodes, PolicyFiles files) {
        this.nodes = nodes;
        this.files = files;
    }

    TlsSettings read(Node tls) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(tls, "tls", KEYS);
        Node upstreamCa = entries.get("upstream_ca");
        List<Path> cas = new ArrayList<>();
        if (upstreamCa == null) {
            return new TlsSettings(cas);
        }
        String path = "tls.upstream_ca";
        Map<Path, String> seen = new HashMap<>();
        List<Node> items = nodes.sequence(upstreamCa, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            Node item = items.get(i);
            Path file = files.read(nodes, item, itemPath);
            String text = nodes.string(item, itemPath);
            String problem = unreadable(file);
            if (problem != null) {
                throw nodes.error(item, itemPath, "cannot read " + Quoting.quote(text) + " (" + file + "): " + problem);
            }
            String earlier = seen.putIfAbsent(file, itemPath);
            if (earlier != null) {
                throw nodes.error(item, itemPath, Quoting.quote(text) + " is already listed at " + earlier);
            }
            cas.add(file);
        }
        return new TlsSettings(cas);
    }

    /** Why the file cannot serve as a CA file, or null; the PEM inside is the proxy's to parse. */
    private static String unreadable(Path file) {
        if (!Files.exists(file)) {
            return "no such file";
        }
        if (!Files.isRegularFile(file)) {
            return "not a regular file";
        }
        if (!Files.isReadable(file)) {
            return "permission denied";
        }
        return null;
    }
}
