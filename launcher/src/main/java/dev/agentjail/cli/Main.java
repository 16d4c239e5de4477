package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the agentjail command line: wires the subcommands and maps failures to exit codes. */
@Command(
        name = "agentjail",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Runs AI coding agents in a jail whose only route out is an inspecting egress proxy.")
public final class Main implements Runnable {
    /**
     * The subcommands, in the order help lists them. Picocli builds a command's model by reflection, which costs a
     * cold JVM tens of milliseconds per command: a command line that names one gets only that one (its help, errors
     * and behaviour are the same), anything else (no command, help, an unknown name) gets them all.
     */
    private static final List<String> SUBCOMMANDS =
            List.of("run", "proxy", "policy", "init", "ca", "log", "report", "review");

    // A switch, not a map of constructor references: the JDK 25 AOT cache (bin/agentjail) fails to assemble with
    // lambdas held in static state.
    private static Object subcommand(String name) {
        return switch (name) {
            case "run" -> new RunCommand();
            case "proxy" -> new ProxyCommand();
            case "policy" -> new PolicyCommand();
            case "init" -> new ProjectInitCommand();
            case "ca" -> new CaCommand();
            case "log" -> new LogCommand();
            case "report" -> new ReportCommand();
            case "review" -> new ReviewCommand();
            default -> throw new IllegalArgumentException(name);
        };
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        machineId();
        // Netty's pooled allocators report chunk allocations as JFR events, and the first report loads the JFR event
        // machinery: ~0.1 s of CPU in a session whose audit link reads from a pool (docs/benchmarks.md run 29).
        if (System.getProperty("io.netty.jfr.enabled") == null) {
            System.setProperty("io.netty.jfr.enabled", "false");
        }
        if (args.length > 0 && args[0].equals("run")) {
            Prewarm.start();
        }
        System.exit(execute(args));
    }

    /**
     * Netty tells its channels apart by a machine id it derives from a hardware address, and warns on every run where
     * there is none (only {@code lo}, as in a network namespace). The id only has to be unique to this process's
     * channels: a random one, unless the user set one.
     */
    static void machineId() {
        if (System.getProperty("io.netty.machineId") == null) {
            byte[] id = java.nio.ByteBuffer.allocate(8)
                    .putLong(java.util.concurrent.ThreadLocalRandom.current().nextLong())
                    .array();
            id[0] |= 0x02; // A locally administered address, as no hardware has.
            System.setProperty(
                    "io.netty.machineId", java.util.HexFormat.ofDelimiter(":").formatHex(id));
        }
    }

    /** Runs the CLI and returns its exit code; used by tests too. */
    public static int execute(String... args) {
        StartupTrace.mark("main");
        Optional<RunArgs.Parsed> run = RunArgs.parse(args);
        if (run.isPresent()) {
            return execute(run.get());
        }
        CommandLine cli = commandLine(args);
        cli.setExitCodeExceptionMapper(ex -> {
            if (ex instanceof CliException ce) {
                return ce.exitCode();
            }
            return ex instanceof CommandLine.ParameterException ? ExitCodes.USAGE : ExitCodes.FAILURE;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> failed(commandLine.getErr(), ex));
        return cli.execute(args);
    }

    /** Runs a session whose command line {@link RunArgs} read, with the same error reporting as picocli's path. */
    private static int execute(RunArgs.Parsed run) {
        PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, System.err.charset()), true);
        try {
            return run.command().run(err, run.separated());
        } catch (Exception e) {
            return failed(err, e);
        } finally {
            err.flush();
        }
    }

    /** Reports a command's failure in one line and gives its exit code. */
    private static int failed(PrintWriter err, Exception e) {
        err.println("agentjail: " + IoErrors.message(e));
        return e instanceof CliException ce ? ce.exitCode() : ExitCodes.FAILURE;
    }

    /**
     * The command line for {@code args}: with only the subcommand they name when they name one, else with every
     * subcommand (no arguments: all of them).
     */
    static CommandLine commandLine(String... args) {
        CommandLine cli = new CommandLine(new Main());
        if (args.length > 0 && SUBCOMMANDS.contains(args[0])) {
            cli.addSubcommand(args[0], subcommand(args[0]));
            configure(cli.getSubcommands().get(args[0]));
        } else {
            for (String name : SUBCOMMANDS) {
                cli.addSubcommand(name, subcommand(name));
                configure(cli.getSubcommands().get(name));
            }
            cli.addSubcommand("help", new CommandLine.HelpCommand());
        }
        HelpLayout.install(cli, System.getenv());
        return cli;
    }

    /**
     * What annotations cannot say: {@code run}'s options end at COMMAND, so {@code agentjail run claude --resume}
     * passes --resume to claude.
     */
    private static void configure(CommandLine subcommand) {
        if (subcommand.getCommandName().equals("run")) {
            subcommand.setStopAtPositional(true);
        }
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * The version and git commit the build embedded (version.properties): {@code agentjail 0.1.0 (commit 1a2b3c4d5e6f)};
     * a jar built from a source checkout by bin/agentjail or Maven says {@code dev} for the version.
     */
    static final class Version implements CommandLine.IVersionProvider {
        static final String RESOURCE = "version.properties";

        @Override
        public String[] getVersion() throws java.io.IOException {
            java.util.Properties p = new java.util.Properties();
            try (java.io.InputStream in = Main.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new java.io.IOException(RESOURCE + " is missing from the agentjail jar");
                }
                p.load(in);
            }
            return new String[] {line(p.getProperty("version", "dev"), p.getProperty("commit", "unknown"))};
        }

        static String line(String version, String commit) {
            return "agentjail " + version + " (commit " + commit + ")";
        }
    }
}
