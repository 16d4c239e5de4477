package dev.agentjail.jail;

import java.nio.file.Path;

/**
 * A path inside the project that the agent must not change, as found on disk before the jail starts.
 *
 * @param relative the path below the project directory
 * @param state whether it exists, and if not, what kind of read-only placeholder blocks its creation
 */
public record ProtectedPath(Path relative, State state) {
    /** How a protected path is made read-only in the jail. */
    public enum State {
        /** Exists: bound read-only onto itself. */
        EXISTS,
        /** Missing file: an empty read-only file is bound there, so it cannot be created. */
        MISSING_FILE,
        /** Missing directory: an empty read-only tmpfs is mounted there, so nothing can be created below it. */
        MISSING_DIR,
        /**
         * A directory on the way to a protected path, bound read-write onto itself: a mount point cannot be renamed,
         * removed or replaced, so {@code mv .git .git.orig; mkdir .git} cannot swap out what is protected below it.
         */
        PIN
    }

    public ProtectedPath {
        JailPaths.relative(relative, "protected path");
        if (state == null) {
            throw new IllegalArgumentException("protected path " + relative + " has no state");
        }
    }
}
