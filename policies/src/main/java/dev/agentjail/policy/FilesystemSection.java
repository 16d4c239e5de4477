package dev.agentjail.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code filesystem} section of a policy into a {@link FilesystemPolicy}. */
final class FilesystemSection {
    private static final Set<String> KEYS = Set.of("read", "write", "mask", "protected");

    private final YamlNodes nodes;

    FilesystemSection(YamlNodes nodes) {
        this.nodes = nodes;
    }

    FilesystemPolicy read(Node filesystem) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(filesystem, "filesystem", KEYS);
        // One map across read and write: a path is bound once, read-only or read-write.
        Map<HostPath, String> seenPaths = new HashMap<>();
        List<HostPath> read = hostPaths(entries.get("read"), "filesystem.read", seenPaths);
        List<HostPath> write = hostPaths(entries.get("write"), "filesystem.write", seenPaths);
        List<ProjectGlob> mask = globs(entries.get("mask"), "filesystem.mask");
        List<ProjectGlob> protectedPaths = globs(entries.get("protected"), "filesystem.protected");
        return new FilesystemPolicy(read, write, mask, protectedPaths);
    }

    private List<HostPath> hostPaths(Node node, String path, Map<HostPath, String> seen) throws PolicyException {
        List<HostPath> paths = new ArrayList<>();
        if (node == null) {
            return paths;
        }
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String text = nodes.string(items.get(i), itemPath);
            HostPath hostPath;
            try {
                hostPath = HostPath.parse(text);
            } catch (MalformedEntryException e) {
                throw nodes.error(
                        items.get(i), itemPath, "invalid path " + Quoting.quote(text) + ": " + e.getMessage());
            }
            String earlier = seen.putIfAbsent(hostPath, itemPath);
            if (earlier != null) {
                throw nodes.error(
                        items.get(i), itemPath, Quoting.quote(hostPath.text()) + " is already listed at " + earlier);
            }
            paths.add(hostPath);
        }
        return paths;
    }

    private List<ProjectGlob> globs(Node node, String path) throws PolicyException {
        List<ProjectGlob> globs = new ArrayList<>();
        if (node == null) {
            return globs;
        }
        Map<ProjectGlob, String> seen = new HashMap<>();
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String text = nodes.string(items.get(i), itemPath);
            ProjectGlob glob;
            try {
                glob = ProjectGlob.parse(text);
            } catch (MalformedEntryException e) {
                throw nodes.error(
                        items.get(i), itemPath, "invalid pattern " + Quoting.quote(text) + ": " + e.getMessage());
            }
            String earlier = seen.putIfAbsent(glob, itemPath);
            if (earlier != null) {
                throw nodes.error(
                        items.get(i), itemPath, Quoting.quote(glob.pattern()) + " is already listed at " + earlier);
            }
            globs.add(glob);
        }
        return globs;
    }
}
