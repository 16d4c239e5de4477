package dev.agentjail.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Where agentjail keeps its files by default, following the XDG base directory conventions. */
final class Paths {
    private Paths() {}

    /** The user's home on the host: {@code $HOME}, else the JVM's idea of it. */
    static Path home(Map<String, String> env) {
        String home = env.get("HOME");
        return Path.of(home == null || home.isBlank() ? System.getProperty("user.home") : home)
                .toAbsolutePath()
                .normalize();
    }

    /**
     * {@code $XDG_STATE_HOME/agentjail}, else {@code ~/.local/state/agentjail}. A relative {@code XDG_STATE_HOME} is
     * ignored, as the XDG base directory specification says: it would name another state directory, with other
     * sessions' claims and another default log, in every working directory.
     */
    static Path stateHome(Map<String, String> env) {
        String xdg = env.get("XDG_STATE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "agentjail");
        }
        return home(env).resolve(".local/state/agentjail");
    }

    static Path defaultAuditLog(Map<String, String> env) {
        return stateHome(env).resolve("audit.jsonl");
    }

    /** The logs a reading command was given, or the default log (the one {@code log tail} reads) when none. */
    static List<Path> logsOrDefault(List<Path> files, Map<String, String> env) {
        return files == null || files.isEmpty() ? List.of(defaultAuditLog(env)) : List.copyOf(files);
    }
}
