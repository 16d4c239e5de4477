package dev.agentjail.cli;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.Decision;
import dev.agentjail.policy.MalformedTargetException;
import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.PolicyLayer;
import dev.agentjail.policy.PolicyStack;
import dev.agentjail.policy.PolicyYaml;
import dev.agentjail.policy.ProjectPolicies;
import dev.agentjail.policy.Reasons;
import dev.agentjail.policy.Target;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail policy}: checks, shows, suggests and trusts policies; lists the agent presets. */
@Command(
        name = "policy",
        mixinStandardHelpOptions = true,
        description = "Checks, shows, suggests and trusts policies; lists the agent presets.",
        subcommands = {
            PolicyCommand.Check.class,
            PolicyCommand.Show.class,
            PolicyCommand.Suggest.class,
            PolicyTrustCommand.class,
            PolicyPresets.class,
            PolicySchema.class
        })
final class PolicyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }

    /** The options that pick the policy stack, as {@code agentjail run} has them. */
    static final class StackOptions {
        @Option(
                names = "--project",
                paramLabel = "DIR",
                description = "Project directory whose .agentjail.yaml applies (default: the current directory).")
        Path project;

        @Option(
                names = "--policy",
                paramLabel = "FILE",
                description = "Policy file merged on top, as agentjail run --policy (repeatable).")
        List<Path> policyFiles = new ArrayList<>();

        @Option(
                names = "--preset",
                paramLabel = "NAME",
                description = "Agent preset applied under the project policy (repeatable).")
        List<String> presets = new ArrayList<>();

        /** The stack as agentjail run would merge it; a project policy not trusted yet loads, with its status. */
        LoadedPolicy load() {
            return LoadedPolicy.review(
                    System.getenv(),
                    Paths.home(System.getenv()),
                    Optional.of(projectDir(project)),
                    presets,
                    policyFiles);
        }

        /** {@code --project DIR} (default: the current directory), checked to be a directory. */
        static Path projectDir(Path project) {
            Path dir =
                    (project != null ? project : Path.of("")).toAbsolutePath().normalize();
            if (!Files.isDirectory(dir)) {
                throw new CliException(ExitCodes.USAGE, "--project: not a directory: " + dir);
            }
            return dir;
        }
    }

    /** Prints why agentjail run would refuse the project policy's entries that need the user's trust, if it would. */
    static void warnUntrusted(LoadedPolicy loaded, PrintWriter err) {
        loaded.trust().warnings().forEach(err::println);
        err.flush();
    }

    /** {@code agentjail policy check}. */
    @Command(
            name = "check",
            mixinStandardHelpOptions = true,
            description = {
                "Validates policy files. With FILEs, checks each on its own (with what it extends);",
                "without, checks the policy agentjail run would use here: machine, team, user, preset,",
                "project and --policy files merged. Each error names the file, line and key, with the",
                "nearest valid key for a typo. Exit code 0 when valid, 2 when not, 3 when a machine",
                "policy file is not root's alone. Entries of the project policy that need your trust",
                "(agentjail policy trust) and do not have it are warnings here."
            })
    static final class Check implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        StackOptions stack;

        @Parameters(arity = "0..*", paramLabel = "FILE", description = "Policy files to check on their own.")
        List<Path> files = new ArrayList<>();

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (files.isEmpty()) {
                LoadedPolicy loaded = stack.load();
                if (loaded.effective().isEmpty()) {
                    out.println("ok: no policy file applies here; the built-in deny-all policy (no network) would");
                    return ExitCodes.OK;
                }
                List<String> names = loaded.effective().get().sources().stream()
                        .map(s -> s.layer().description() + " " + s.name())
                        .toList();
                out.println("ok: " + String.join(", ", names));
                out.flush();
                warnUntrusted(loaded, err);
                return ExitCodes.OK;
            }
            int exit = ExitCodes.OK;
            Path home = Paths.home(System.getenv());
            for (Path file : files) {
                try {
                    PolicyStack.load(List.of(PolicyStack.Input.file(PolicyLayer.OVERRIDE, file)), home);
                    out.println("ok: " + file);
                } catch (PolicyException e) {
                    err.println(e.getMessage());
                    exit = ExitCodes.USAGE;
                }
            }
            return exit;
        }
    }

    /** {@code agentjail policy show}. */
    @Command(
            name = "show",
            mixinStandardHelpOptions = true,
            description = {
                "Prints the effective policy agentjail run would use here, merged from every layer, as",
                "YAML that loads back to the same policy. --origin adds the file and line of every value,",
                "and marks the project entries that need your trust (agentjail policy trust) with whether",
                "they have it."
            })
    static final class Show implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        StackOptions stack;

        @Option(names = "--origin", description = "Annotate every value with the file and line it came from.")
        boolean origin;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            LoadedPolicy loaded = stack.load();
            if (loaded.effective().isEmpty()) {
                out.println("# no policy file applies here: the built-in deny-all policy (no network)");
                out.println("version: 1");
                return ExitCodes.OK;
            }
            out.print(loaded.effective().get().render(origin, loaded.trust()));
            out.flush();
            warnUntrusted(loaded, spec.commandLine().getErr());
            return ExitCodes.OK;
        }
    }

    /** {@code agentjail policy suggest --from-log FILE}. */
    @Command(
            name = "suggest",
            mixinStandardHelpOptions = true,
            description = {
                "Learning mode: reads an audit log and proposes network.allow entries for the hosts the",
                "allow list refused (or, in network.mode: report, would have refused), as a diff against",
                "the project policy to review. Hosts refused by a deny entry or the SSRF guard are listed",
                "but never proposed. Run the agent once with network.mode: report to collect them all."
            })
    static final class Suggest implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        StackOptions stack;

        @ArgGroup(exclusive = false, multiplicity = "1")
        LogOption log;

        static final class LogOption {
            @Option(
                    names = "--from-log",
                    paramLabel = "FILE",
                    required = true,
                    description = "Audit log to learn from.")
            List<Path> files = new ArrayList<>();
        }

        private record Seen(int count, Instant last) {}

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            LoadedPolicy loaded = stack.load();
            Map<String, Seen> wanted = new TreeMap<>();
            Map<String, String> refused = new TreeMap<>();
            int[] records = {0};
            LogReader.forEach(
                    log.files, LogReader.warnAndSkip(spec.commandLine().getErr()), r -> {
                        if (!LogRecord.REQUEST.equals(r.kind())
                                || r.host() == null
                                || r.host().isEmpty()) {
                            return;
                        }
                        records[0]++;
                        boolean notListed = LogRecord.DENY.equals(r.decision())
                                && (Reasons.NOT_ALLOWED.equals(r.reason()) || Reasons.NO_NETWORK.equals(r.reason()));
                        boolean wouldDeny = Reasons.WOULD_DENY.equals(r.reason());
                        String entry = entry(r);
                        if (notListed || wouldDeny) {
                            wanted.merge(
                                    entry, new Seen(1, r.ts()), (a, b) -> new Seen(a.count + 1, later(a.last, b.last)));
                        } else if (LogRecord.DENY.equals(r.decision()) && !entry.isEmpty()) {
                            refused.putIfAbsent(entry, r.reason());
                        }
                    });
            // Drop what the current policy already allows (the log may predate a policy change).
            Map<String, Seen> proposals = new LinkedHashMap<>();
            wanted.forEach((entry, seen) -> {
                if (!allowedNow(loaded, entry)) {
                    proposals.put(entry, seen);
                }
            });
            Optional<Path> projectFile = projectFile();
            String target = projectFile.map(Path::toString).orElse(ProjectPolicies.FILE_NAME + " (new)");
            out.println("# agentjail policy suggest: " + records[0] + " requests read from "
                    + String.join(", ", log.files.stream().map(Path::toString).toList()));
            if (proposals.isEmpty()) {
                out.println("# nothing to suggest: no request was refused for want of an allow entry");
            } else {
                out.println("# Review every host: an allowed host receives whatever the agent sends it.");
                out.println("--- " + target);
                out.println("+++ " + target + " (suggested)");
                out.println("@@ network.allow @@");
                proposals.forEach((entry, seen) -> out.println("+    - " + PolicyYaml.scalar(entry) + "    # "
                        + seen.count + (seen.count == 1 ? " request" : " requests") + ", last " + seen.last));
            }
            refused.forEach((entry, reason) ->
                    out.println("# not suggested: " + LogRecordText.printable(entry) + " (refused: " + reason + ")"));
            out.flush();
            return ExitCodes.OK;
        }

        private Optional<Path> projectFile() {
            try {
                Path dir = (stack.project != null ? stack.project : Path.of("")).toAbsolutePath();
                return ProjectPolicies.find(dir);
            } catch (IOException e) {
                return Optional.empty();
            }
        }

        private static Instant later(Instant a, Instant b) {
            return a.isAfter(b) ? a : b;
        }

        /** The allow entry for a refused request: the host, with the port when it is not the scheme's default. */
        private static String entry(LogRecord r) {
            boolean tls = "CONNECT".equals(r.method()) || "https".equals(r.scheme());
            int defaultPort = tls ? 443 : 80;
            return r.port() == 0 || r.port() == defaultPort ? r.host() : r.host() + ":" + r.port();
        }

        private static boolean allowedNow(LoadedPolicy loaded, String entry) {
            try {
                Target target = Authorities.parseAuthority(entry, 443);
                Decision decision = loaded.policy().network().decide(target, 443);
                return decision.allowed() && !Reasons.WOULD_DENY.equals(decision.reason());
            } catch (MalformedTargetException e) {
                return true; // Not a host we could propose anyway.
            }
        }
    }
}
