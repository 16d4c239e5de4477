package dev.agentjail.cli;

import java.util.List;
import java.util.Map;

/**
 * The examples section of each command's help and man page, by the command's qualified name; a command that writes
 * its own footer (such as {@code review}) keeps it. HelpLayoutTest checks that every command has one.
 */
final class Examples {
    /** An audit log, shorter than the default place ~/.local/state/agentjail/audit.jsonl. */
    private static final String LOG = "audit.jsonl";

    private static final Map<String, List<String>> BY_COMMAND = Map.ofEntries(
            Map.entry(
                    "agentjail",
                    List.of(
                            "  Jail a command under the default policy (no network at all):",
                            "    agentjail run -- sh -c 'echo hello from the jail'",
                            "  Run an agent with its preset, in the current project:",
                            "    agentjail run claude",
                            "  Help on one command:",
                            "    agentjail help run")),
            Map.entry(
                    "agentjail run",
                    List.of(
                            "  Jail a command under the default policy (no network at all):",
                            "    agentjail run -- sh -c 'echo hello from the jail'",
                            "  Run claude with its preset (picked by the program's name):",
                            "    agentjail run claude --resume",
                            "  Another project, a team policy on top, half an hour at most:",
                            "    agentjail run --project ~/src/app --policy team.yaml \\",
                            "        --timeout 30m -- codex")),
            Map.entry(
                    "agentjail proxy",
                    List.of(
                            "  The proxy on its own, for clients outside a jail:",
                            "    agentjail proxy --policy policy.yaml --listen 127.0.0.1:3128 \\",
                            "        --audit-log audit.jsonl",
                            "    agentjail ca export --pem ca.pem",
                            "    curl -x http://127.0.0.1:3128 --cacert ca.pem https://api.anthropic.com/")),
            Map.entry(
                    "agentjail policy",
                    List.of(
                            "  Check the policy here, then show it merged, each value with its origin:",
                            "    agentjail policy check",
                            "    agentjail policy show --origin")),
            Map.entry(
                    "agentjail policy check",
                    List.of(
                            "  Check every layer that agentjail run would merge here:",
                            "    agentjail policy check",
                            "  Check one file on its own:",
                            "    agentjail policy check team.yaml")),
            Map.entry(
                    "agentjail policy show",
                    List.of(
                            "  The merged policy, each value with the FILE:LINE it came from:",
                            "    agentjail policy show --origin",
                            "  As it would be with a preset applied:",
                            "    agentjail policy show --preset claude-code")),
            Map.entry(
                    "agentjail policy trust",
                    List.of(
                            "  List what the project's policy widens, then trust it:",
                            "    agentjail policy trust",
                            "  Take the trust back:",
                            "    agentjail policy trust --revoke")),
            Map.entry(
                    "agentjail policy presets",
                    List.of(
                            "  List the presets, then show one:",
                            "    agentjail policy presets",
                            "    agentjail policy presets codex")),
            Map.entry(
                    "agentjail policy schema",
                    List.of("  Write the schema for editors:", "    agentjail policy schema > .agentjail.schema.json")),
            Map.entry(
                    "agentjail init",
                    List.of(
                            "  A commented .agentjail.yaml that extends claude-code's preset:",
                            "    agentjail init --agent claude-code")),
            Map.entry("agentjail ca", List.of("  Where the CA is and what it is:", "    agentjail ca show")),
            Map.entry(
                    "agentjail ca init",
                    List.of("  Create the CA ahead of the first session:", "    agentjail ca init")),
            Map.entry("agentjail ca show", List.of("  The CA's files and fingerprint:", "    agentjail ca show")),
            Map.entry(
                    "agentjail ca export",
                    List.of(
                            "  The CA certificate, for a client outside a jail:",
                            "    agentjail ca export --pem ca.pem")),
            Map.entry("agentjail ca rotate", List.of("  Replace the CA with a new one:", "    agentjail ca rotate")),
            Map.entry(
                    "agentjail log",
                    List.of("  Follow the audit log, denials only:", "    agentjail log tail -f --deny")),
            Map.entry(
                    "agentjail log tail",
                    List.of(
                            "  The last 20 records of the default log:",
                            "    agentjail log tail -n 20",
                            "  Follow it, only what was refused for one host:",
                            "    agentjail log tail -f --deny --host api.github.com",
                            "  Follow the programs the agent runs and the files it changes in the jail:",
                            "    agentjail log tail -f --exec --files")),
            Map.entry(
                    "agentjail log summary",
                    List.of("  Requests, denials and top hosts of a log:", "    agentjail log summary " + LOG)),
            Map.entry(
                    "agentjail log export",
                    List.of(
                            "  The log as OCSF for a SIEM:",
                            "    agentjail log export --format ocsf -o audit.ocsf.jsonl " + LOG)),
            Map.entry(
                    "agentjail log verify",
                    List.of(
                            "  Check that nothing was changed, removed or inserted:",
                            "    agentjail log verify " + LOG)),
            Map.entry(
                    "agentjail report",
                    List.of(
                            "  An HTML report of a log, to open in a browser:",
                            "    agentjail report -o report.html " + LOG)));

    private Examples() {}

    /** The examples of the command named {@code qualifiedName} ("agentjail log tail"); empty when it has none. */
    static List<String> of(String qualifiedName) {
        return BY_COMMAND.getOrDefault(qualifiedName, List.of());
    }
}
