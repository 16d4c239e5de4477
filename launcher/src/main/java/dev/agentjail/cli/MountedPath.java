package dev.agentjail.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where a directory lies in its file system, whatever path names it: the device of the mount it is under (from {@code
 * /proc/self/mountinfo}) and its path from that file system's root. A bind mount of a project's subdirectory elsewhere
 * gives the subdirectory's own place, so two paths to one tree compare as what they are ({@link
 * PlaceholderJournal#overlap}).
 *
 * @param device the mount's {@code major:minor}
 * @param path the directory's path inside the file system, from its root
 */
record MountedPath(String device, Path path) {

    /** The place of {@code dir} (absolute, links resolved) by the mounts of {@code mountInfo}; empty when none holds it. */
    static Optional<MountedPath> of(Path dir, String mountInfo) {
        String device = null;
        Path root = null;
        Path at = null;
        for (String line : mountInfo.split("\n")) {
            String[] f = line.split(" ");
            if (f.length < 5) {
                continue;
            }
            Path point = Path.of(unescape(f[4]));
            // The longest mount point holding the directory; of mounts on one point, the last (the one on top).
            if (dir.startsWith(point) && (at == null || point.getNameCount() >= at.getNameCount())) {
                device = f[2];
                root = Path.of(unescape(f[3]));
                at = point;
            }
        }
        if (at == null || !root.isAbsolute()) {
            return Optional.empty();
        }
        return Optional.of(
                new MountedPath(device, root.resolve(at.relativize(dir)).normalize()));
    }

    /** {@link #of(Path, String)} with this process's mounts. */
    static Optional<MountedPath> of(Path dir) {
        try {
            return of(dir, Files.readString(Path.of("/proc/self/mountinfo")));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Whether one of the two is the other or inside it, on one file system. */
    boolean overlaps(MountedPath other) {
        return device.equals(other.device) && (path.startsWith(other.path) || other.path.startsWith(path));
    }

    /** mountinfo writes space, tab, newline and backslash as three octal digits after a backslash. */
    private static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && isOctal(field, i + 1)) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isOctal(String s, int from) {
        if (from + 3 > s.length()) {
            return false;
        }
        for (int i = from; i < from + 3; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '7') {
                return false;
            }
        }
        return true;
    }
}
