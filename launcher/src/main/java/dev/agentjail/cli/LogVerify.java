package dev.agentjail.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code agentjail log verify}: Checks the hash chain of audit logs. */
@Command(name = "verify", mixinStandardHelpOptions = true, description = "Checks the hash chain of audit logs.")
final class LogVerify implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }
}
