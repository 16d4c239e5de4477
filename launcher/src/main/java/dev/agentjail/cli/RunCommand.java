package dev.agentjail.cli;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.jail.InitBinary;
import dev.agentjail.policy.Presets;
import dev.agentjail.proxy.audit.FileAuditLog;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail run}: runs a command in a jail whose only route out is the session's own proxy. */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        description = {
            "Runs COMMAND in a bubblewrap jail: its own network namespace with only loopback, where",
            "127.0.0.1:PORT is agentjail's egress proxy (the only way out); the project directory",
            "read-write, the system read-only, an empty home; a filtered environment; resource limits",
            "and a session timeout. Returns COMMAND's exit code.",
            "",
            "Policy, in layers (see docs/policy.md): the team policy (AGENTJAIL_TEAM_POLICY), the user",
            "policy (~/.config/agentjail/policy.yaml), the agent's preset and the project's .agentjail.yaml,",
            "then --policy FILE. Lists add up, later layers override scalars, no layer lifts a deny or",
            "changes a locked key. With no policy file at all, a built-in policy allows no network.",
            "",
            "agentjail run claude (without --) also applies the preset named after the program",
            "(agentjail policy presets lists them); agentjail run -- claude does not."
        },
        sortOptions = false)
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--policy",
            paramLabel = "FILE",
            description = "Policy YAML file, merged on top of the team, user and project policies (repeatable).")
    List<Path> policyFiles = new ArrayList<>();

    @Option(
            names = "--preset",
            paramLabel = "NAME",
            description = "Agent preset to apply under the project policy (repeatable; see agentjail policy presets).")
    List<String> presets = new ArrayList<>();

    @Option(
            names = "--project",
            paramLabel = "DIR",
            description = "Project directory, mounted read-write (default: the current directory). The home"
                    + " directory, /, /tmp and system directories such as /usr are refused.")
    Path project;

    @Option(
            names = "--audit-log",
            paramLabel = "FILE",
            description = "Audit log (default: the policy's audit.log, else $XDG_STATE_HOME/agentjail/audit.jsonl).")
    Path auditLog;

    @Option(
            names = "--timeout",
            paramLabel = "DURATION",
            description = "Session wall-clock limit, e.g. 90s, 30m, 2h (default: the policy's limits.timeout).")
    String timeout;

    @Option(
            names = "--ca-dir",
            paramLabel = "DIR",
            description = "Directory of the local CA that TLS interception signs with, created on first use"
                    + " (default: $XDG_DATA_HOME/agentjail/ca, else ~/.local/share/agentjail/ca).")
    Path caDir;

    @Option(
            names = "--port",
            paramLabel = "PORT",
            defaultValue = "3128",
            description = "Port of the proxy inside the jail (default: ${DEFAULT-VALUE}).")
    int port = 3128; // the default when RunArgs reads the command line (picocli applies defaultValue)

    @Mixin
    AuditChainOptions auditChain = new AuditChainOptions();

    @Parameters(
            arity = "1..*",
            paramLabel = "COMMAND",
            description = "The command and its arguments: agentjail's options end at COMMAND (or at --).")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        return run(
                spec.commandLine().getErr(),
                separated(spec.commandLine().getParseResult().originalArgs(), command.size()));
    }

    /** Whether "--" came right before COMMAND (its last {@code commandSize} arguments), not among its own arguments. */
    static boolean separated(List<String> originalArgs, int commandSize) {
        int dashes = originalArgs.indexOf("--");
        return dashes >= 0 && originalArgs.size() - dashes - 1 == commandSize;
    }

    /**
     * Runs the session with the options parsed (by picocli or {@link RunArgs}); {@code separated} says whether
     * COMMAND followed "--".
     */
    Integer run(PrintWriter err, boolean separated) throws Exception {
        StartupTrace.mark("command line parsed");
        Path projectDir =
                (project != null ? project : Path.of("")).toAbsolutePath().normalize();
        if (!Files.isDirectory(projectDir)) {
            throw new CliException(ExitCodes.USAGE, "--project: not a directory: " + projectDir);
        }
        projectDir = projectDir.toRealPath();
        // Before the policy is read (a preset picked by name is announced then) and before a session exists.
        ProjectDirectories.refuseWhole(projectDir, Paths.home(System.getenv()));
        // One session at a time on a project, before the policy is read: the hold first (a session another user or
        // state directory runs must refuse this one before its claim sweeps what it takes for a dead session's
        // leftovers, which the running session's jail mounts over), then the claim, which removes what a killed
        // session left (an empty .agentjail.yaml would read as an empty policy).
        Path init = InitBinary.extract(InitBinary.defaultCacheDir(System.getenv(), Paths.home(System.getenv())));
        ProjectHold held;
        try {
            held = ProjectHold.take(init, projectDir, err);
        } catch (CliException busy) {
            // This user's own session says more: its id, pid and start.
            throw PlaceholderJournal.runningOn(PlaceholderJournal.dir(System.getenv()), projectDir)
                    .map(message -> new CliException(busy.exitCode(), message))
                    .orElse(busy);
        }
        try (ProjectHold hold = held) {
            PlaceholderJournal.Claim claim = PlaceholderJournal.claim(
                    PlaceholderJournal.dir(System.getenv()), Sessions.newId(), projectDir, err);
            try {
                return run(err, separated, projectDir, claim, init);
            } finally {
                PlaceholderJournal.release(claim);
            }
        }
    }

    private Integer run(PrintWriter err, boolean separated, Path projectDir, PlaceholderJournal.Claim claim, Path init)
            throws Exception {
        LoadedPolicy policy = LoadedPolicy.discover(
                System.getenv(),
                Paths.home(System.getenv()),
                Optional.of(projectDir),
                presets(separated, err),
                policyFiles);
        StartupTrace.mark("policy loaded");
        if (timeout != null) {
            policy.checkNotLocked("limits.timeout", "--timeout");
        }
        Duration sessionTimeout = timeout != null
                ? Durations.parse(timeout, "--timeout")
                : policy.policy().limits().timeout();
        if (port < 1 || port > 65535) {
            throw new CliException(ExitCodes.USAGE, "--port: out of range: " + port);
        }
        Path logPath = auditLog != null
                ? auditLog
                : policy.policy().audit().log().orElseGet(() -> Paths.defaultAuditLog(System.getenv()));
        Path ca = caDir != null ? caDir : CertificateAuthority.defaultDirectory(System.getenv());
        FileAuditLog.Options auditOptions = auditChain.toOptions(FileAuditLog.DEFAULT_SYNC_INTERVAL);
        Session session = new Session(
                policy,
                ca,
                projectDir,
                logPath,
                auditOptions,
                auditChain.hmacKeyFile(),
                port,
                sessionTimeout,
                List.copyOf(command),
                err,
                claim,
                init);
        return session.run();
    }

    /**
     * The presets to apply: those named by --preset, plus, when the command was given without "--",
     * the one named after the program (agentjail run claude), which is named on {@code err}.
     */
    private List<String> presets(boolean separated, PrintWriter err) {
        List<String> names = new ArrayList<>(presets);
        if (!separated && !command.isEmpty()) {
            Presets.forProgram(command.get(0)).ifPresent(p -> {
                if (!names.contains(p.name())) {
                    names.add(p.name());
                    err.println("agentjail: preset " + p.name());
                }
            });
        }
        return names;
    }
}
