package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The cgroup hierarchies the launcher sees: the mounts of {@code /proc/self/mountinfo} and the launcher's own place in
 * each ({@code /proc/self/cgroup}), with every path under {@code root} ({@code /} on a real host, a temporary directory
 * holding a fake tree in tests).
 *
 * @param root where the mount points are, {@code /} on a real host
 * @param selfCgroup the text of {@code /proc/self/cgroup}
 * @param mountInfo the text of {@code /proc/self/mountinfo}
 * @param pid the launcher's pid as the cgroup files show it
 * @param dirs makes and removes cgroup directories; the kernel fills one with the controllers' files as it is made, and
 *     removes it with them (a fake tree's does the same)
 */
public record CgroupHost(Path root, String selfCgroup, String mountInfo, long pid, Dirs dirs) {
    /** Makes (failing if it exists) and removes one cgroup directory. */
    public interface Dirs {
        void create(Path dir) throws IOException;

        void remove(Path dir) throws IOException;
    }

    /** The kernel's cgroup file systems: mkdir and rmdir. */
    private static final Dirs KERNEL = new Dirs() {
        @Override
        public void create(Path dir) throws IOException {
            Files.createDirectory(dir);
        }

        @Override
        public void remove(Path dir) throws IOException {
            Files.deleteIfExists(dir);
        }
    };

    /** A hierarchy: its mount point under {@link #root} and the directory of the launcher's cgroup in it. */
    record Hierarchy(Path mount, Path self) {}

    /** The running host; a file that cannot be read leaves its part empty (no cgroup to use). */
    public static CgroupHost system() {
        return new CgroupHost(
                Path.of("/"),
                readOrEmpty(Path.of("/proc/self/cgroup")),
                readOrEmpty(Path.of("/proc/self/mountinfo")),
                ProcessHandle.current().pid(),
                KERNEL);
    }

    /** The cgroup v2 hierarchy, if one is mounted and the launcher's place in it is known. */
    Optional<Hierarchy> unified() {
        return find("cgroup2", null, "");
    }

    /** The cgroup v1 hierarchy that carries {@code controller}, if one is mounted. */
    Optional<Hierarchy> v1(String controller) {
        return find("cgroup", controller, controller);
    }

    private Optional<Hierarchy> find(String fsType, String controller, String selfKey) {
        for (String line : mountInfo.lines().toList()) {
            // id parent major:minor root mount-point options [optional fields] - type source super-options
            int dash = line.indexOf(" - ");
            if (dash < 0) {
                continue;
            }
            String[] head = line.substring(0, dash).split(" ");
            String[] tail = line.substring(dash + 3).split(" ");
            if (head.length < 5 || tail.length < 3 || !tail[0].equals(fsType)) {
                continue;
            }
            if (controller != null && !Arrays.asList(tail[2].split(",")).contains(controller)) {
                continue;
            }
            Optional<String> self = selfPath(selfKey);
            String mountRoot = unescape(head[3]);
            if (self.isEmpty() || !within(self.get(), mountRoot)) {
                continue;
            }
            Path mount = under(unescape(head[4]));
            String relative = self.get().substring(mountRoot.length()).replaceFirst("^/+", "");
            return Optional.of(new Hierarchy(mount, relative.isEmpty() ? mount : mount.resolve(relative)));
        }
        return Optional.empty();
    }

    /** The launcher's path in the hierarchy of {@code controller} ({@code ""}: the v2 line {@code 0::PATH}). */
    private Optional<String> selfPath(String controller) {
        for (String line : selfCgroup.lines().toList()) {
            String[] parts = line.split(":", 3);
            if (parts.length < 3) {
                continue;
            }
            List<String> names = new ArrayList<>(Arrays.asList(parts[1].split(",")));
            if (controller.isEmpty() ? parts[0].equals("0") && parts[1].isEmpty() : names.contains(controller)) {
                return Optional.of(parts[2]);
            }
        }
        return Optional.empty();
    }

    private static boolean within(String path, String mountRoot) {
        return mountRoot.equals("/") || path.equals(mountRoot) || path.startsWith(mountRoot + "/");
    }

    private Path under(String mountPoint) {
        return root.resolve(mountPoint.replaceFirst("^/+", ""));
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes. */
    private static String unescape(String field) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\'
                    && i + 3 < field.length()
                    && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static String readOrEmpty(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }
}
