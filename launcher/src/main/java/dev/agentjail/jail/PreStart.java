package dev.agentjail.jail;

import java.util.ArrayList;
import java.util.List;

/**
 * Runs the policy's {@code jail.pre_start} commands inside the jail before the agent: the agent's
 * argv becomes {@code /bin/sh -c SCRIPT agentjail-pre-start ARGV...}, where the script runs each
 * command in turn and then {@code exec}s the agent, so the agent keeps the process, the signals and
 * the exit code it would have had. The first command that fails ends the session with its exit
 * code and a message naming it. The agent's arguments travel as positional parameters, never
 * through the script text.
 */
public final class PreStart {
    static final String SHELL = "/bin/sh";
    static final String NAME = "agentjail-pre-start";

    private PreStart() {}

    public static List<String> wrap(List<String> commands, List<String> argv) {
        if (commands.isEmpty()) {
            return List.copyOf(argv);
        }
        StringBuilder script = new StringBuilder();
        for (int i = 0; i < commands.size(); i++) {
            // Each command in its own subshell, so an exit or a cd in one does not affect the next or the agent.
            script.append("( ")
                    .append(commands.get(i))
                    .append("\n) || { s=$?; echo \"agentjail: jail.pre_start[")
                    .append(i)
                    .append("] failed with exit code $s\" >&2; exit $s; }\n");
        }
        script.append("exec \"$@\"\n");
        List<String> wrapped = new ArrayList<>(List.of(SHELL, "-c", script.toString(), NAME));
        wrapped.addAll(argv);
        return List.copyOf(wrapped);
    }
}
