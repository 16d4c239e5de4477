package dev.agentjail.cli;

import dev.agentjail.policy.Preset;
import dev.agentjail.policy.Presets;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail policy presets}: lists the built-in agent presets, or prints one of them. */
@Command(
        name = "presets",
        mixinStandardHelpOptions = true,
        description = {
            "Lists the built-in agent presets, one line each: the name, the programs it is",
            "for, and what it allows. A preset is an ordinary policy for one coding agent:",
            "its API hosts (never its telemetry hosts), its config directories, its",
            "non-secret variables, and rules that keep its API keys out of the jail (the",
            "proxy adds them to the agent's requests on the way out).",
            "",
            "Use one from a project's .agentjail.yaml:",
            "  extends: [claude-code]",
            "or start the agent by its program name, without --, which applies the preset",
            "whose PROGRAMS include it; --preset NAME names one explicitly:",
            "  agentjail run claude",
            "  agentjail run --preset codex -- codex exec \"fix the tests\"",
            "",
            "With NAME, prints that preset's policy, with its comments and sources.",
            "See docs/presets.md."
        },
        sortOptions = false)
final class PolicyPresets implements Callable<Integer> {
    private static final String NAME_HEADER = "NAME";
    private static final String PROGRAMS_HEADER = "PROGRAMS";
    private static final String DESCRIPTION_HEADER = "DESCRIPTION";
    private static final String GAP = "  ";

    @Spec
    CommandSpec spec;

    @Parameters(
            arity = "0..1",
            paramLabel = "NAME",
            description = "A preset to print in full (its YAML) instead of the list.")
    String name;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (name != null) {
            Preset preset = Presets.named(name)
                    .orElseThrow(() -> new CliException(
                            ExitCodes.USAGE,
                            "unknown preset '" + name + "'; the presets are: " + String.join(", ", Presets.names())));
            out.print(preset.yaml());
            if (!preset.yaml().endsWith("\n")) {
                out.println();
            }
            out.flush();
            return ExitCodes.OK;
        }
        List<Preset> presets = Presets.all();
        int nameWidth = NAME_HEADER.length();
        int programsWidth = PROGRAMS_HEADER.length();
        for (Preset preset : presets) {
            nameWidth = Math.max(nameWidth, preset.name().length());
            programsWidth = Math.max(programsWidth, programs(preset).length());
        }
        out.println(row(nameWidth, programsWidth, NAME_HEADER, PROGRAMS_HEADER, DESCRIPTION_HEADER));
        for (Preset preset : presets) {
            out.println(row(nameWidth, programsWidth, preset.name(), programs(preset), preset.description()));
        }
        out.flush();
        return ExitCodes.OK;
    }

    private static String programs(Preset preset) {
        return String.join(",", preset.binaries());
    }

    private static String row(int nameWidth, int programsWidth, String name, String programs, String description) {
        return pad(name, nameWidth) + GAP + pad(programs, programsWidth) + GAP + description;
    }

    private static String pad(String text, int width) {
        return text + " ".repeat(width - text.length());
    }
}
