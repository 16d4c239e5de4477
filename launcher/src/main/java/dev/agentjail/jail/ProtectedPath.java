package dev.agentjail.jail;

import java.nio.file.Path;
import java.util.Optional;

/**
 * A path inside the project that the agent must not change, as found on disk before the jail starts.
 *
 * @param relative the path below the project directory
 * @param state whether it exists, and if not, what kind of read-only placeholder blocks its creation
 * @param source for {@link State#REPLACED}: the host file shown there instead; for {@link State#STAGED}: the session's
 *     copy of the directory
 */
public record ProtectedPath(Path relative, State state, Optional<Path> source) {
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
        PIN,
        /**
         * Exists, and the jail reads a file of the session's in its place, read-only: {@code .git/info/exclude} with
         * the session's placeholders added, so that {@code git add -A} inside does not commit them.
         */
        REPLACED,
        /**
         * A repository's metadata directory: the jail writes a session copy of its top level in its place, bound
         * read-write (a mount point, so it is pinned as well), with git's data directories bound from the host below it
         * (see {@link GitStages}); the host's directory itself stays out of the agent's reach.
         */
        STAGED
    }

    public ProtectedPath {
        JailPaths.relative(relative, "protected path");
        if (state == null) {
            throw new IllegalArgumentException("protected path " + relative + " has no state");
        }
        if (source == null || source.isPresent() != (state == State.REPLACED || state == State.STAGED)) {
            throw new IllegalArgumentException(
                    "protected path " + relative + ": a source goes with REPLACED and STAGED only");
        }
    }

    public ProtectedPath(Path relative, State state) {
        this(relative, state, Optional.empty());
    }
}
