package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A bounded walk or review reached one of its bounds; the message names the bound, its value and where it was reached.
 * Whoever catches it must not treat the part not walked as checked.
 */
public final class WalkLimitException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The bounds a walk can reach. */
    public enum Bound {
        DEPTH("depth", "directory levels"),
        ENTRIES("entry", "entries"),
        BYTES("byte", "bytes read"),
        TIME("time", "milliseconds");

        private final String label;
        private final String unit;

        Bound(String label, String unit) {
            this.label = label;
            this.unit = unit;
        }

        /** How the bound is named in messages: "depth limit", "entry limit", ... */
        public String limitName() {
            return label + " limit";
        }
    }

    private final Bound bound;
    private final long limit;
    private final transient Path where;

    public WalkLimitException(Bound bound, long limit, Path where) {
        super("the " + bound.limitName() + " of " + limit + " " + bound.unit + " was reached at " + where);
        this.bound = bound;
        this.limit = limit;
        this.where = where;
    }

    public Bound bound() {
        return bound;
    }

    public long limit() {
        return limit;
    }

    /** The absolute path of the directory (or file) where the bound was reached. */
    public Path where() {
        return where;
    }
}
