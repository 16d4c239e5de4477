package dev.agentjail.policy;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * How the jail presents itself to the agent: its {@code hostname} (one DNS label), whether the
 * agent runs in a new session without a controlling terminal ({@code newSession}; a TUI that needs
 * the terminal turns it off, and seccomp then blocks TIOCSTI and TIOCLINUX), and whether {@code
 * /etc/localtime} is visible ({@code shareTimezone}); the host devices the agent may use ({@code
 * devices}, none by default); and shell commands run inside the jail, in order, before the agent
 * ({@code preStart}; the first that fails ends the session with its exit code).
 */
public record JailSettings(
        String hostname, boolean newSession, boolean shareTimezone, Set<Device> devices, List<String> preStart) {
    public static final String DEFAULT_HOSTNAME = "agentjail";

    /** Opt-in host devices. */
    public enum Device {
        /** GPUs: /dev/dri, NVIDIA and AMD compute nodes. */
        GPU,
        /** Cameras: /dev/video* and /dev/media*. */
        CAMERA,
        /** Sound cards: /dev/snd. */
        AUDIO
    }

    public JailSettings {
        Objects.requireNonNull(hostname, "hostname");
        Optional<String> problem = hostnameProblem(hostname);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get() + ": " + hostname);
        }
        devices = Set.copyOf(devices);
        preStart = List.copyOf(preStart);
        for (String command : preStart) {
            if (command.isBlank() || command.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("empty pre-start command or NUL in it");
            }
        }
    }

    /** No devices and no pre-start commands. */
    public JailSettings(String hostname, boolean newSession, boolean shareTimezone) {
        this(hostname, newSession, shareTimezone, Set.of(), List.of());
    }

    /** Hostname {@code agentjail}, a new session, the host's timezone. */
    public static JailSettings defaults() {
        return new JailSettings(DEFAULT_HOSTNAME, true, true);
    }

    /** RFC 1123 label rules: 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen. */
    static Optional<String> hostnameProblem(String hostname) {
        if (hostname.isEmpty()) {
            return Optional.of("empty hostname");
        }
        if (hostname.length() > HostNames.MAX_LABEL) {
            return Optional.of("longer than 63 characters");
        }
        if (hostname.indexOf('.') >= 0) {
            return Optional.of("must be a single label, without dots");
        }
        for (int i = 0; i < hostname.length(); i++) {
            char c = hostname.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
            if (!ok) {
                return Optional.of("only letters, digits and '-' are allowed");
            }
        }
        if (hostname.startsWith("-") || hostname.endsWith("-")) {
            return Optional.of("cannot start or end with '-'");
        }
        return Optional.empty();
    }
}
