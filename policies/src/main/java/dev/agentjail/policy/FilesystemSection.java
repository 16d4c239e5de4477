package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads the {@code filesystem} section of a policy into a {@link FilesystemPolicy}. */
final class FilesystemSection {
    static final Set<String> KEYS = Set.of("read", "write", "mask", "protected", "deny");

    private final YamlNodes nodes;
    private final PolicyFiles files;

    /** Host paths no layer may bind or read a credential from, each with where it is written. */
    private final Map<Path, String> denied = new LinkedHashMap<>();

    FilesystemSection(YamlNodes nodes, PolicyFiles files) {
        this.nodes = nodes;
        this.files = files;
    }

    FilesystemPolicy read(Node filesystem) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(filesystem, "filesystem", KEYS);
        deny(entries.get("deny"), "filesystem.deny");
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
            checkNotDenied(items.get(i), itemPath, hostPath.resolve(files.home()));
            String earlier = seen.putIfAbsent(hostPath, itemPath);
            if (earlier != null) {
                throw nodes.error(
                        items.get(i), itemPath, Quoting.quote(hostPath.text()) + " is already listed at " + earlier);
            }
            paths.add(hostPath);
        }
        return paths;
    }

    private void deny(Node node, String path) throws PolicyException {
        if (node == null) {
            return;
        }
        List<Node> items = nodes.sequence(node, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String text = nodes.string(items.get(i), itemPath);
            try {
                denied.putIfAbsent(
                        HostPath.parse(text).resolve(files.home()),
                        nodes.origins().where(items.get(i)));
            } catch (MalformedEntryException e) {
                throw nodes.error(
                        items.get(i), itemPath, "invalid path " + Quoting.quote(text) + ": " + e.getMessage());
            }
        }
    }

    /**
     * Refuses a host path that is a denied path, lies inside one, or contains one (binding a parent
     * would expose the denied path too).
     */
    void checkNotDenied(Node node, String path, Path hostPath) throws PolicyException {
        Path normal = hostPath.normalize();
        for (Map.Entry<Path, String> entry : denied.entrySet()) {
            Path deniedPath = entry.getKey();
            if (normal.startsWith(deniedPath) || deniedPath.startsWith(normal)) {
                throw nodes.error(
                        node,
                        path,
                        Quoting.quote(normal.toString()) + " is or overlaps "
                                + Quoting.quote(deniedPath.toString()) + ", denied by filesystem.deny ("
                                + entry.getValue() + ")");
            }
        }
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
