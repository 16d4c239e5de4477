package dev.agentjail.jail;

import java.nio.file.Path;
import java.util.Optional;

/**
 * One path of the user's real home that the policy makes visible in the jail's otherwise empty tmpfs home.
 *
 * @param relative path below the home directory, such as {@code .gitconfig} or {@code .cache/pip}
 * @param access whether the agent may write to it
 * @param source the host path bound there when it is not the same path under the real home: where a symbolic
 *     link in the way leads (see {@link BindSources}); empty binds {@code home/relative} itself
 */
public record HomeEntry(Path relative, Access access, Optional<Path> source) {
    public HomeEntry {
        JailPaths.relative(relative, "home entry");
        if (access == null) {
            throw new IllegalArgumentException("home entry " + relative + " has no access mode");
        }
        if (source == null) {
            throw new IllegalArgumentException("home entry " + relative + " has a null source");
        }
        source.ifPresent(s -> JailPaths.absolute(s, "home entry source"));
    }

    /** The entry bound from the same path under the real home. */
    public HomeEntry(Path relative, Access access) {
        this(relative, access, Optional.empty());
    }
}
