package dev.agentjail.cli;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.MachinePolicyException;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyDiscovery;
import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.PolicyLayer;
import dev.agentjail.policy.PolicyStack;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.ProxyServer;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.FileAuditLog;
import dev.agentjail.proxy.audit.LockWaitException;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.net.SystemResolver;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code agentjail proxy}: runs the egress proxy on its own until interrupted. */
@Command(
        name = "proxy",
        mixinStandardHelpOptions = true,
        description = {
            "Runs the egress proxy on its own: an HTTP/1.1 forward proxy (absolute-form http:// and CONNECT)",
            "that allows only what the policy allows, refuses private addresses (SSRF guard), and writes one",
            "audit record per request. CONNECTs to allowed hosts are intercepted (TLS with a certificate from",
            "the local CA, which clients must trust: agentjail ca export) unless the policy tunnels them.",
            "Ctrl-C stops it cleanly, with the audit log flushed."
        },
        sortOptions = false)
final class ProxyCommand implements Callable<Integer> {
    /** What to do about an audit log that cannot be opened: said after the OS reason, by run and by proxy. */
    static final String AUDIT_LOG_WAY_OUT = "; pass --audit-log FILE in a directory you can write";

    /** What to do about a log that cannot be opened: another place, or, for a lock held too long, who to look at. */
    static String auditLogWayOut(IOException e) {
        if (e instanceof LockWaitException lock) {
            // Every agentjail writer is a java process.
            String holder = lock.holder();
            String who = holder.endsWith("(java)")
                    ? holder + " holds it, probably another agentjail writing to the same log (stopped, or starved of"
                            + " CPU)"
                    : holder.startsWith("process ")
                            ? holder + " holds it, which is not agentjail (its writers are java processes)"
                            : "its holder could not be told from /proc/locks";
            return "; " + who + ": let it finish or stop it, or pass --audit-log FILE to write a log of this session's"
                    + " own";
        }
        return AUDIT_LOG_WAY_OUT;
    }

    @Spec
    CommandSpec spec;

    @Option(
            names = "--policy",
            required = true,
            paramLabel = "FILE",
            description = "Policy YAML file; the machine policy (/etc/agentjail), if any, is merged before it.")
    Path policyFile;

    @Option(
            names = "--listen",
            paramLabel = "HOST:PORT",
            description = "TCP address to listen on (default: ${DEFAULT-VALUE}; port 0 picks a free port).",
            defaultValue = "127.0.0.1:3128")
    String listen;

    @Option(names = "--unix-socket", paramLabel = "PATH", description = "Also listen on this Unix domain socket.")
    Path unixSocket;

    @Option(
            names = "--audit-log",
            paramLabel = "FILE",
            description = "Audit log (JSON lines, appended). Default: $XDG_STATE_HOME/agentjail/audit.jsonl.")
    Path auditLog;

    @Option(
            names = "--audit-sync",
            paramLabel = "DURATION",
            description = "Group-commit interval for fsync of the audit log (default: ${DEFAULT-VALUE}).",
            defaultValue = "1s")
    String auditSync;

    @Mixin
    AuditChainOptions auditChain = new AuditChainOptions();

    @Option(
            names = "--ca-dir",
            paramLabel = "DIR",
            description = "Directory of the local CA that TLS interception signs with, created on first use"
                    + " (default: $XDG_DATA_HOME/agentjail/ca, else ~/.local/share/agentjail/ca). Clients of the"
                    + " proxy must trust it: agentjail ca export.")
    Path caDir;

    @Option(names = "--threads", paramLabel = "N", description = "I/O threads (default: number of CPUs).")
    Integer threads;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        Policy policy;
        try {
            // The machine policy binds a proxy of its own as it binds a session: its denies and locks hold here too.
            List<PolicyStack.Input> inputs = new ArrayList<>(PolicyDiscovery.machine());
            inputs.add(PolicyStack.Input.file(PolicyLayer.OVERRIDE, policyFile));
            policy = PolicyStack.load(inputs, Paths.home(System.getenv())).policy();
        } catch (MachinePolicyException e) {
            throw LoadedPolicy.machinePolicy(e);
        } catch (PolicyException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        }
        InetSocketAddress address = HostPorts.parseListen(listen);
        Duration sync = Durations.parse(auditSync, "--audit-sync");
        FileAuditLog.Options auditOptions = auditChain.toOptions(sync);
        Path ca = caDir != null ? caDir : CertificateAuthority.defaultDirectory(System.getenv());
        // Before the audit log opens: a secret or CA problem stops the proxy before it has done anything.
        InspectionSetup inspection =
                InspectionSetup.open(policy, System.getenv(), ca, Clock.systemUTC(), new SecureRandom());
        Path logPath = auditLog != null ? auditLog : Paths.defaultAuditLog(System.getenv());
        FileAuditLog audit;
        try {
            audit = FileAuditLog.open(logPath, auditOptions);
        } catch (IOException e) {
            inspection.close();
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot open audit log " + logPath + ": " + IoErrors.describe(logPath, e) + auditLogWayOut(e),
                    e);
        }
        ExecutorService dns = DnsExecutors.create();
        int io = threads != null ? threads : Runtime.getRuntime().availableProcessors();
        ProxyConfig config = new ProxyConfig(
                policy.network(),
                Sessions.newId(),
                audit,
                new SystemResolver(dns),
                HttpLimits.defaults(),
                Timeouts.defaults(),
                Clock.systemUTC(),
                io,
                inspection.interception(),
                inspection.inspection(),
                policy.mcp(),
                System.getenv());
        ProxyServer server = new ProxyServer(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.close();
                            audit.close();
                            dns.shutdownNow();
                            inspection.close();
                            stopped.countDown();
                        },
                        "agentjail-shutdown"));
        InetSocketAddress bound;
        try {
            bound = server.listen(address);
            if (unixSocket != null) {
                server.listenUnix(unixSocket);
            }
        } catch (Exception e) {
            throw new CliException(ExitCodes.FAILURE, "cannot listen on " + listen + ": " + IoErrors.message(e), e);
        }
        out.printf(
                "agentjail proxy listening on %s%s (policy %s, audit log %s, session %s)%n",
                HostPorts.format(bound),
                unixSocket != null ? " and unix:" + unixSocket : "",
                policyFile,
                logPath,
                config.session());
        out.flush();
        inspection.warmUp(Duration.ZERO);
        stopped.await();
        return ExitCodes.OK;
    }
}
