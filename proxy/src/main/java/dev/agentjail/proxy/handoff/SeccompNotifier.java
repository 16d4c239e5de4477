package dev.agentjail.proxy.handoff;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Tells a seccomp notification descriptor apart from the listeners that share its hand-off connection. */
final class SeccompNotifier {
    /** What /proc/self/fd/N reads for a descriptor made by SECCOMP_FILTER_FLAG_NEW_LISTENER (no brackets). */
    static final String LINK = "anon_inode:seccomp notify";

    private SeccompNotifier() {}

    /** True when {@code fd} is a seccomp notifier; any other descriptor, or one that cannot be read, is not. */
    static boolean is(int fd) {
        try {
            return LINK.equals(
                    Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString());
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}
