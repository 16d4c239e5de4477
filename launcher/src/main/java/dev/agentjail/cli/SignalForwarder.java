package dev.agentjail.cli;

import dev.agentjail.jail.BwrapStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Passes SIGINT, SIGTERM and SIGHUP that the launcher receives on to the agent's top process inside
 * the jail (bwrap forwards none, and a signal to bwrap would tear the jail down with SIGKILL).
 */
final class SignalForwarder {
    private static final List<String> SIGNALS = List.of("INT", "TERM", "HUP");

    private final Map<String, SignalHandler> previous = new HashMap<>();
    private final Path statusFile;

    private SignalForwarder(Path statusFile) {
        this.statusFile = statusFile;
    }

    /**
     * Installs the handlers. Without a new session the agent shares the terminal's foreground process
     * group and gets the terminal's SIGINT itself, so that one is not forwarded a second time.
     */
    static SignalForwarder install(Path statusFile, boolean newSession) {
        SignalForwarder f = new SignalForwarder(statusFile);
        for (String name : SIGNALS) {
            if (!newSession && name.equals("INT")) {
                continue;
            }
            try {
                f.previous.put(name, Signal.handle(new Signal(name), s -> f.forward(name)));
            } catch (IllegalArgumentException e) {
                // The JVM reserves this signal here (e.g. with -Xrs); the default action stays.
            }
        }
        return f;
    }

    void uninstall() {
        previous.forEach((name, handler) -> Signal.handle(new Signal(name), handler));
    }

    private void forward(String name) {
        try {
            if (!Files.exists(statusFile)) {
                return;
            }
            BwrapStatus status = BwrapStatus.read(statusFile);
            if (status.childPid().isEmpty()) {
                return;
            }
            for (long pid : BwrapStatus.agentPids(status.childPid().getAsLong())) {
                new ProcessBuilder("kill", "-s", name, Long.toString(pid))
                        .inheritIO()
                        .start()
                        .waitFor();
            }
        } catch (IOException e) {
            // The jail is already gone.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
