package dev.agentjail.policy;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Objects;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Turns a file named in a policy into an absolute host path: {@code ~/...} under the user's home,
 * an absolute path as written, anything else relative to the directory of the policy file, so a
 * policy means the same files whatever directory agentjail starts in.
 */
record PolicyFiles(Origins origins, Path home) {
    PolicyFiles {
        Objects.requireNonNull(origins, "origins");
        Objects.requireNonNull(home, "home");
        if (!home.isAbsolute()) {
            throw new IllegalArgumentException("home must be absolute");
        }
    }

    /** The home agentjail itself uses: {@code $HOME}, else the JVM's {@code user.home}. */
    static Path defaultHome() {
        String home = System.getenv("HOME");
        return Path.of(home == null || home.isEmpty() ? System.getProperty("user.home") : home)
                .toAbsolutePath();
    }

    /** The absolute, normalised path a policy entry names, relative paths taken from {@code baseDir}. */
    Path resolve(String text, Path baseDir) throws MalformedEntryException {
        if (text.isEmpty()) {
            throw new MalformedEntryException("empty path");
        }
        if (Quoting.hasControl(text)) {
            throw new MalformedEntryException("NUL and other control characters are not allowed");
        }
        Path resolved;
        try {
            if (text.equals("~") || text.startsWith("~/")) {
                String rest = text.substring(1).replaceFirst("^/+", "");
                if (rest.isEmpty()) {
                    throw new MalformedEntryException("'~' is a directory, not a file");
                }
                resolved = home.resolve(rest);
            } else if (text.startsWith("~")) {
                throw new MalformedEntryException("'~user' is not supported; write '~/' for your own home");
            } else {
                resolved = baseDir.resolve(text);
            }
        } catch (InvalidPathException e) {
            throw new MalformedEntryException("not a valid path");
        }
        return resolved.normalize();
    }

    /**
     * Reads a path entry and resolves it against the directory of the file it is written in, as a
     * policy error naming the node's line and key.
     */
    Path read(YamlNodes nodes, Node node, String path) throws PolicyException {
        String text = nodes.string(node, path);
        try {
            return resolve(text, origins.source(node).baseDir());
        } catch (MalformedEntryException e) {
            throw nodes.error(node, path, "invalid path " + Quoting.quote(text) + ": " + e.getMessage());
        }
    }
}
