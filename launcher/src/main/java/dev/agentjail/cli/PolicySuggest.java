package dev.agentjail.cli;

import dev.agentjail.policy.PolicyYaml;
import dev.agentjail.policy.ProjectPolicies;
import dev.agentjail.policy.ProjectTrust;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code agentjail policy suggest}: proposes allow entries for the hosts an audit log shows refused. */
@Command(
        name = "suggest",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Learning mode: reads audit logs and proposes network.allow entries for the",
            "hosts the allow list refused (or, with network.mode: report, would have",
            "refused), as a diff against the project policy to review; --apply writes",
            "them into it. Run the agent once with network.mode: report to collect them.",
            "",
            "Never proposed, each listed as '# not suggested: HOST (why)': hosts a deny",
            "entry or the SSRF guard refused; IP addresses in any spelling (above all",
            "those the SSRF guard refuses, which an allow entry would let through; for a",
            "public one, allow its name); localhost and agentjail's own names; names",
            "that resolved to an address the SSRF guard refuses; hosts the current",
            "policy already allows or denies.",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  Review what one session needed:",
            "    agentjail policy suggest --from-log ~/.local/state/agentjail/audit.jsonl \\",
            "        --session 3f2a9c41d0e8b7a6",
            "  Then write it into .agentjail.yaml:",
            "    agentjail policy suggest --from-log ~/.local/state/agentjail/audit.jsonl \\",
            "        --session 3f2a9c41d0e8b7a6 --apply",
            "",
            "Exit status: 0 done (also with nothing to suggest); 1 a file cannot be",
            "written, or the written policy failed its check (its old bytes are back); 2 bad",
            "usage, a log that does not exist or cannot be read, no record of the",
            "--session, a policy that does not load, or a policy file --apply cannot edit",
            "faithfully (nothing written); 3 a machine policy file is not root's alone."
        })
final class PolicySuggest implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    PolicyCommand.StackOptions stack;

    @Option(
            names = "--from-log",
            paramLabel = "FILE",
            description = "Audit log to learn from (repeatable; default: $XDG_STATE_HOME/agentjail/audit.jsonl, as"
                    + " log tail).")
    List<Path> files = new ArrayList<>();

    @Option(
            names = "--session",
            paramLabel = "ID",
            description = "Only the records of session ID (their \"session\" field; agentjail run prints it when the"
                    + " session ends).")
    String session;

    @Option(
            names = "--apply",
            description = "Write the proposals into the project's .agentjail.yaml (created if missing), keeping its"
                    + " comments and layout, and print the diff applied. Refuses a file it cannot edit faithfully"
                    + " (flow-style list, anchors, uneven indentation, network locked by another layer) or a"
                    + " symbolic link, and writes nothing then.")
    boolean apply;

    /** The environment the policy files are found from; tests set their own. */
    Map<String, String> env = System.getenv();

    @Override
    public Integer call() {
        if (session != null && session.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--session: empty session id");
        }
        PrintWriter out = spec.commandLine().getOut();
        LoadedPolicy loaded = stack.load(env);
        List<Path> files = Paths.logsOrDefault(this.files, env);
        SuggestLog log = new SuggestLog(session);
        LogReader.forEach(files, LogReader.warnAndSkip(spec.commandLine().getErr()), log::add);
        String from = String.join(", ", files.stream().map(Path::toString).toList());
        if (session != null && log.sessionRecords() == 0) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "--session: no record of session " + LogRecordText.printable(session) + " in " + from);
        }
        SuggestPlan plan = SuggestPlan.of(log, loaded.policy().network());
        out.println("# agentjail policy suggest: " + log.requests() + " requests read from " + from
                + (session == null ? "" : " (session " + LogRecordText.printable(session) + ")"));
        List<SuggestPlan.Proposal> proposals = plan.proposals();
        if (proposals.isEmpty()) {
            out.println("# nothing to suggest: no request was refused for want of an allow entry that could be one");
            printSkips(out, plan);
            return ExitCodes.OK;
        }
        if (!apply) {
            preview(out, proposals);
            printSkips(out, plan);
            out.println("# to write these entries into the project policy, run this again with --apply");
            return ExitCodes.OK;
        }
        out.flush();
        SuggestApply.Applied applied = SuggestApply.apply(stack, env, loaded, proposals);
        out.print(applied.diff());
        printSkips(out, plan);
        out.println("# wrote " + proposals.size() + (proposals.size() == 1 ? " entry" : " entries")
                + " to network.allow in " + applied.file());
        Path root = applied.file().getParent();
        out.println("# An allow entry in a project policy widens the jail and needs your trust: review the change,"
                + " then trust the project policy again: " + ProjectTrust.COMMAND + " --project " + root);
        if (!applied.after().trust().allowed()) {
            out.println("# until then agentjail run refuses this project policy");
        }
        return ExitCodes.OK;
    }

    private void preview(PrintWriter out, List<SuggestPlan.Proposal> proposals) {
        String target = projectFile().map(Path::toString).orElse(ProjectPolicies.FILE_NAME + " (new)");
        out.println("# Review every host: an allowed host receives whatever the agent sends it.");
        out.println("--- " + target);
        out.println("+++ " + target + " (suggested)");
        out.println("@@ network.allow @@");
        for (SuggestPlan.Proposal p : proposals) {
            int n = p.count().requests();
            out.println("+    - " + PolicyYaml.scalar(p.entry()) + "    # " + n + (n == 1 ? " request" : " requests")
                    + ", last " + p.count().last());
        }
    }

    private static void printSkips(PrintWriter out, SuggestPlan plan) {
        plan.skips()
                .forEach(s -> out.println("# not suggested: " + LogRecordText.printable(s.host()) + " ("
                        + LogRecordText.printable(s.reason()) + ")"));
        out.flush();
    }

    private Optional<Path> projectFile() {
        try {
            return ProjectPolicies.find(PolicyCommand.StackOptions.projectDir(stack.project));
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
