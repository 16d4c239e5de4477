package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * How the proxy verifies upstream servers: {@code upstreamCa} lists PEM files of extra CA
 * certificates trusted in addition to the system trust store (absolute paths, checked to be
 * readable regular files when the policy loaded; their contents are read by the proxy).
 */
public record TlsSettings(List<Path> upstreamCa) {
    public TlsSettings {
        upstreamCa = List.copyOf(upstreamCa);
        Set<Path> seen = new HashSet<>();
        for (Path file : upstreamCa) {
            if (!file.isAbsolute()) {
                throw new IllegalArgumentException("upstream CA path must be absolute: " + file);
            }
            if (!seen.add(file)) {
                throw new IllegalArgumentException("upstream CA listed twice: " + file);
            }
        }
    }

    /** The system trust store only. */
    public static TlsSettings defaults() {
        return new TlsSettings(List.of());
    }
}
