package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Fixed paths inside the jail, the checks every path handed to bwrap must pass, and real-path lookups for them. */
public final class JailPaths {
    /** Where agentjail-init is bound read-only inside the jail. */
    public static final Path INIT = Path.of("/run/agentjail/agentjail-init");
    /** Where the host proxy's hand-off socket is bound read-only inside the jail. */
    public static final Path HANDOFF_SOCKET = Path.of("/run/agentjail/handoff.sock");
    /** Where the PEM CA bundle (system roots plus agentjail's CA) is bound read-only inside the jail. */
    public static final Path CA_BUNDLE = Path.of("/run/agentjail/ca-bundle.pem");
    /** Where the same certificates, as a PKCS#12 trust store for the JVM, are bound read-only inside the jail. */
    public static final Path TRUST_STORE = Path.of("/run/agentjail/truststore.p12");

    private JailPaths() {}

    /** Rejects relative and non-normalized paths: bwrap resolves them against its own cwd, not ours. */
    public static Path absolute(Path path, String what) {
        if (path == null) {
            throw new IllegalArgumentException(what + " is missing");
        }
        if (!path.isAbsolute() || !path.normalize().equals(path)) {
            throw new IllegalArgumentException(what + " must be an absolute, normalized path: " + path);
        }
        return path;
    }

    /** Accepts only a plain relative path that stays below its base (no "..", no leading "/"). */
    public static Path relative(Path path, String what) {
        if (path == null) {
            throw new IllegalArgumentException(what + " is missing");
        }
        if (path.isAbsolute() || path.toString().isEmpty() || !path.normalize().equals(path) || path.startsWith("..")) {
            throw new IllegalArgumentException(what + " must be a relative path below its base: " + path);
        }
        return path;
    }

    /** The real path of the longest existing prefix of {@code path}, with the rest appended. */
    public static Path realPrefix(Path path) {
        Path existing = path;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return path;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(path));
        } catch (IOException e) {
            return path;
        }
    }
}
