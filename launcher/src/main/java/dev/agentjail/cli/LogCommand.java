package dev.agentjail.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code agentjail log}: reads, checks and exports audit logs. */
@Command(
        name = "log",
        mixinStandardHelpOptions = true,
        description = "Reads, checks and exports agentjail audit logs.",
        subcommands = {LogTail.class, LogSummary.class, LogExport.class, LogVerify.class})
final class LogCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }
}
