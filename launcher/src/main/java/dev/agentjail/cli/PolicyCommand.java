package dev.agentjail.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code agentjail policy}: checks, shows and suggests policies; lists the agent presets. */
@Command(
        name = "policy",
        mixinStandardHelpOptions = true,
        description = "Checks, shows and suggests policies; lists the agent presets.",
        subcommands = {PolicyPresets.class})
final class PolicyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }
}
