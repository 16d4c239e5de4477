package dev.agentjail.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code agentjail report}: Writes a self-contained HTML report of an audit log. */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        description = "Writes a self-contained HTML report of an audit log.")
final class ReportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }
}
