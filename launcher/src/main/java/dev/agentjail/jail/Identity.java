package dev.agentjail.jail;

import java.util.Optional;

/** The uid and gid the agent sees inside the jail's user namespace. */
public record Identity(int uid, int gid) {
    /** What a launcher started as root maps the agent to: an ordinary, unprivileged user id. */
    public static final Identity UNPRIVILEGED = new Identity(1000, 1000);

    public Identity {
        if (uid < 0 || gid < 0) {
            throw new IllegalArgumentException("uid and gid must not be negative: " + uid + "/" + gid);
        }
    }

    /**
     * Chooses the inside identity for a launcher running as {@code outsideUid}: root is mapped to {@link
     * #UNPRIVILEGED} so that the agent never runs as uid 0; anyone else keeps their own uid (bwrap's default).
     */
    public static Optional<Identity> forOutsideUid(int outsideUid) {
        return outsideUid == 0 ? Optional.of(UNPRIVILEGED) : Optional.empty();
    }
}
