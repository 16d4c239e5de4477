package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What bwrap reported through {@code --json-status-fd}: the host pid of the sandbox's first process once the
 * jail is up, and the agent's exit code at the end. No child pid means bwrap failed before the jail existed.
 *
 * @param childPid host pid of bwrap's process inside the jail's pid namespace (pid 1 there)
 * @param exitCode the agent's exit code, written when it has exited
 */
public record BwrapStatus(OptionalLong childPid, OptionalInt exitCode) {
    private static final Pattern CHILD_PID = Pattern.compile("\"child-pid\"\\s*:\\s*(\\d+)");
    private static final Pattern EXIT_CODE = Pattern.compile("\"exit-code\"\\s*:\\s*(\\d+)");

    /** Parses bwrap's status stream: a sequence of small JSON objects. */
    public static BwrapStatus parse(String json) {
        Matcher pid = CHILD_PID.matcher(json);
        Matcher exit = EXIT_CODE.matcher(json);
        return new BwrapStatus(
                pid.find() ? OptionalLong.of(Long.parseLong(pid.group(1))) : OptionalLong.empty(),
                exit.find() ? OptionalInt.of(Integer.parseInt(exit.group(1))) : OptionalInt.empty());
    }

    /** Reads the status file {@link BwrapInvocation} asked bwrap to write; a missing file is an empty status. */
    public static BwrapStatus read(Path file) throws IOException {
        try {
            return parse(Files.readString(file));
        } catch (NoSuchFileException e) {
            return new BwrapStatus(OptionalLong.empty(), OptionalInt.empty());
        }
    }

    /**
     * The host pids of the agent's top process: the children of bwrap's process inside the jail. Signals for the
     * agent (SIGINT, SIGTERM, SIGHUP) must go there: bwrap does not forward them, and a signal to bwrap itself
     * kills it, which takes the jail down with SIGKILL ({@code --die-with-parent}).
     */
    public static List<Long> agentPids(long childPid) throws IOException {
        Path children = Path.of("/proc", Long.toString(childPid), "task", Long.toString(childPid), "children");
        String text = Files.readString(children).trim();
        return text.isEmpty()
                ? List.of()
                : Arrays.stream(text.split("\\s+")).map(Long::parseLong).toList();
    }
}
