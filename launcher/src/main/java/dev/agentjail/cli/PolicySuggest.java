package dev.agentjail.cli;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.Decision;
import dev.agentjail.policy.MalformedTargetException;
import dev.agentjail.policy.PolicyYaml;
import dev.agentjail.policy.ProjectPolicies;
import dev.agentjail.policy.Reasons;
import dev.agentjail.policy.Target;
import java.io.IOException;
import java.io.PrintWriter;
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
import picocli.CommandLine.Spec;

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
final class PolicySuggest implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    PolicyCommand.StackOptions stack;

    @ArgGroup(exclusive = false, multiplicity = "1")
    LogOption log;

    static final class LogOption {
        @Option(names = "--from-log", paramLabel = "FILE", required = true, description = "Audit log to learn from.")
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
        LogReader.forEach(log.files, LogReader.warnAndSkip(spec.commandLine().getErr()), r -> {
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
                wanted.merge(entry, new Seen(1, r.ts()), (a, b) -> new Seen(a.count + 1, later(a.last, b.last)));
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
            proposals.forEach((entry, seen) -> out.println("+    - " + PolicyYaml.scalar(entry) + "    # " + seen.count
                    + (seen.count == 1 ? " request" : " requests") + ", last " + seen.last));
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
