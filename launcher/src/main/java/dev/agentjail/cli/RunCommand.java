package dev.agentjail.cli;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.policy.ProjectPolicies;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
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
            "Policy: --policy FILE, else the project's .agentjail.yaml, else a built-in policy that",
            "allows no network at all."
        },
        sortOptions = false)
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--policy",
            paramLabel = "FILE",
            description = "Policy YAML file (default: the project's .agentjail.yaml, else deny-all).")
    Path policyFile;

    @Option(
            names = "--project",
            paramLabel = "DIR",
            description = "Project directory, mounted read-write (default: the current directory).")
    Path project;

    @Option(
            names = "--audit-log",
            paramLabel = "FILE",
            description = "Audit log (default: $XDG_STATE_HOME/agentjail/audit.jsonl).")
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
    int port;

    @Parameters(
            arity = "1..*",
            paramLabel = "COMMAND",
            description = "The command and its arguments (put them after --).")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        Path projectDir =
                (project != null ? project : Path.of("")).toAbsolutePath().normalize();
        if (!Files.isDirectory(projectDir)) {
            throw new CliException(ExitCodes.USAGE, "--project: not a directory: " + projectDir);
        }
        projectDir = projectDir.toRealPath();
        LoadedPolicy policy = loadPolicy(projectDir);
        Duration sessionTimeout = timeout != null
                ? Durations.parse(timeout, "--timeout")
                : policy.policy().limits().timeout();
        if (port < 1 || port > 65535) {
            throw new CliException(ExitCodes.USAGE, "--port: out of range: " + port);
        }
        Path logPath = auditLog != null ? auditLog : Paths.defaultAuditLog(System.getenv());
        Path ca = caDir != null ? caDir : CertificateAuthority.defaultDirectory(System.getenv());
        Session session = new Session(policy, ca, projectDir, logPath, port, sessionTimeout, List.copyOf(command), err);
        return session.run();
    }

    private LoadedPolicy loadPolicy(Path projectDir) {
        // "~/" in the policy's file entries is the host user's home, as the jail's binds use it.
        Path home = Paths.home(System.getenv());
        try {
            if (policyFile != null) {
                return LoadedPolicy.of(PolicyLoader.load(policyFile, home), policyFile);
            }
            Optional<Path> found = ProjectPolicies.find(projectDir);
            if (found.isPresent()) {
                return LoadedPolicy.of(PolicyLoader.load(found.get(), home), found.get());
            }
            return LoadedPolicy.builtIn();
        } catch (PolicyException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, "cannot look for the project policy: " + e.getMessage());
        }
    }
}
