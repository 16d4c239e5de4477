package dev.agentjail.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the agentjail command line: wires the subcommands and maps failures to exit codes. */
@Command(
        name = "agentjail",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Runs AI coding agents in a jail whose only route out is an inspecting egress proxy.",
        subcommands = {
            RunCommand.class,
            ProxyCommand.class,
            PolicyCommand.class,
            ProjectInitCommand.class,
            CaCommand.class,
            LogCommand.class,
            ReportCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Main implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the CLI and returns its exit code; used by tests too. */
    public static int execute(String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.setExitCodeExceptionMapper(ex -> {
            if (ex instanceof CliException ce) {
                return ce.exitCode();
            }
            return ex instanceof CommandLine.ParameterException ? ExitCodes.USAGE : ExitCodes.FAILURE;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            commandLine.getErr().println("agentjail: " + (ex.getMessage() == null ? ex.toString() : ex.getMessage()));
            return ex instanceof CliException ce ? ce.exitCode() : ExitCodes.FAILURE;
        });
        return cli.execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Reads the version from the jar manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"agentjail " + (v == null ? "dev" : v)};
        }
    }
}
