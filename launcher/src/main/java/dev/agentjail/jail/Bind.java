package dev.agentjail.jail;

import java.nio.file.Path;

/**
 * An extra host path the policy binds into the jail.
 *
 * @param source the host path
 * @param target where it appears inside the jail
 * @param access whether the agent may write to it
 * @param optional skip it silently when the source does not exist (bwrap's {@code -try} variants)
 */
public record Bind(Path source, Path target, Access access, boolean optional) {
    public Bind {
        JailPaths.absolute(source, "bind source");
        JailPaths.absolute(target, "bind target");
        if (access == null) {
            throw new IllegalArgumentException("bind " + source + " has no access mode");
        }
        if (target.getNameCount() == 0) {
            throw new IllegalArgumentException("cannot bind over the jail's root: " + source);
        }
    }
}
