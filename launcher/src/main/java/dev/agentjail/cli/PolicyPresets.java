package dev.agentjail.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code agentjail policy presets}: Lists the built-in agent presets. */
@Command(name = "presets", mixinStandardHelpOptions = true, description = "Lists the built-in agent presets.")
final class PolicyPresets implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }
}
