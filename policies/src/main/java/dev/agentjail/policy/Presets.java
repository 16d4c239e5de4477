package dev.agentjail.policy;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The built-in agent presets. (Placeholder API: the presets work replaces this file.) */
public final class Presets {
    private Presets() {}

    public static List<Preset> all() {
        return List.of();
    }

    public static Optional<Preset> named(String name) {
        return Optional.empty();
    }

    public static Optional<Preset> forProgram(String program) {
        return Optional.empty();
    }

    public static Set<String> names() {
        return Set.of();
    }
}
