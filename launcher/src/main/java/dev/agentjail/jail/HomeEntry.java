package dev.agentjail.jail;

import java.nio.file.Path;

/**
 * One path of the user's real home that the policy makes visible in the jail's otherwise empty tmpfs home.
 *
 * @param relative path below the home directory, such as {@code .gitconfig} or {@code .cache/pip}
 * @param access whether the agent may write to it
 */
public record HomeEntry(Path relative, Access access) {
    public HomeEntry {
        JailPaths.relative(relative, "home entry");
        if (access == null) {
            throw new IllegalArgumentException("home entry " + relative + " has no access mode");
        }
    }
}
