package dev.agentjail.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.Model.UsageMessageSpec;

/**
 * Lays out every command's help once, at the terminal's width: descriptions are written in the annotations as lines
 * of a paragraph, which picocli would print as separate lines and then wrap again (summaries cut mid-sentence), and
 * picocli's line breaking splits words at dots and slashes ({@code ~/.} / {@code local/share}). Here a paragraph is
 * its lines joined, wrapped at spaces only; indented lines (examples) are kept as written.
 */
final class HelpLayout {
    /** Picocli's narrowest usage width; below it the option table has no room. */
    static final int MIN_WIDTH = 55;

    private static final int MAX_LEFT_COLUMN = 30;

    private HelpLayout() {}

    /**
     * Installs the layout on {@code cli} and its subcommands: the width from {@code COLUMNS} when set, else the
     * terminal's as picocli detects it (80 when there is none), and the examples of {@link Examples} as a footer.
     */
    static void install(CommandLine cli, Map<String, String> env) {
        UsageMessageSpec usage = cli.getCommandSpec().usageMessage();
        Integer columns = columns(env.get("COLUMNS"));
        if (columns != null) {
            usage.width(Math.max(MIN_WIDTH, columns));
        } else {
            usage.autoWidth(true);
        }
        usage.description(paragraphs(usage.description()).toArray(String[]::new));
        if (usage.footer().length == 0) {
            List<String> examples = Examples.of(cli.getCommandSpec().qualifiedName(" "));
            if (!examples.isEmpty()) {
                usage.footerHeading("%nExamples:%n");
                usage.footer(examples.toArray(String[]::new));
            }
        }
        Map<String, CommandLine.IHelpSectionRenderer> sections = usage.sectionMap();
        sections.put(
                UsageMessageSpec.SECTION_KEY_DESCRIPTION,
                help -> text(help, help.commandSpec().usageMessage().description()));
        sections.put(
                UsageMessageSpec.SECTION_KEY_FOOTER,
                help -> text(help, help.commandSpec().usageMessage().footer()));
        sections.put(UsageMessageSpec.SECTION_KEY_SYNOPSIS, HelpLayout::synopsis);
        sections.put(UsageMessageSpec.SECTION_KEY_PARAMETER_LIST, HelpLayout::parameters);
        sections.put(UsageMessageSpec.SECTION_KEY_OPTION_LIST, HelpLayout::options);
        sections.put(UsageMessageSpec.SECTION_KEY_COMMAND_LIST, HelpLayout::commands);
        for (CommandLine sub : cli.getSubcommands().values()) {
            if (sub.getCommandSpec().parent() == cli.getCommandSpec()) {
                install(sub, env);
            }
        }
    }

    private static Integer columns(String value) {
        if (value == null || !value.matches("[0-9]{1,4}")) {
            return null;
        }
        return Integer.parseInt(value);
    }

    /**
     * The paragraphs of {@code lines}: consecutive lines that do not start with a space are joined into one, an
     * indented line stays a line of its own, an empty line stays as the break between paragraphs.
     */
    static List<String> paragraphs(String[] lines) {
        List<String> out = new ArrayList<>();
        StringBuilder paragraph = null;
        for (String raw : lines) {
            for (String line : raw.replace("%n", "\n").split("\n", -1)) {
                if (line.isBlank() || line.startsWith(" ")) {
                    if (paragraph != null) {
                        out.add(paragraph.toString());
                        paragraph = null;
                    }
                    out.add(line.isBlank() ? "" : line);
                } else if (paragraph == null) {
                    paragraph = new StringBuilder(line.strip());
                } else {
                    paragraph.append(' ').append(line.strip());
                }
            }
        }
        if (paragraph != null) {
            out.add(paragraph.toString());
        }
        return out;
    }

    /** {@code text} wrapped at spaces into lines of at most {@code width} characters (a longer word stays whole). */
    static List<String> wrap(String text, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.strip().split(" +")) {
            if (!line.isEmpty() && line.length() + 1 + word.length() > width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            if (!line.isEmpty()) {
                line.append(' ');
            }
            line.append(word);
        }
        if (!line.isEmpty()) {
            lines.add(line.toString());
        }
        return lines;
    }

    /** The first sentence of a command's description: its summary in the parent's list of commands. */
    static String summary(CommandSpec spec) {
        String[] header = spec.usageMessage().header();
        List<String> paragraphs =
                paragraphs(header.length > 0 ? header : spec.usageMessage().description());
        return firstSentence(paragraphs.isEmpty() ? "" : paragraphs.get(0));
    }

    /** The first sentence of {@code paragraph}, ending in a full stop. */
    static String firstSentence(String paragraph) {
        int end = paragraph.indexOf(". ");
        String sentence = end < 0 ? paragraph : paragraph.substring(0, end + 1);
        // A description that opens with "…, for editors to complete and check them:" and an example.
        return sentence.endsWith(":") ? sentence.substring(0, sentence.length() - 1) + "." : sentence;
    }

    /** Paragraphs wrapped at the help's width, indented lines as written. */
    private static String text(CommandLine.Help help, String[] lines) {
        int width = help.commandSpec().usageMessage().width();
        StringBuilder out = new StringBuilder();
        for (String paragraph : paragraphs(lines)) {
            if (paragraph.isEmpty() || paragraph.startsWith(" ")) {
                out.append(paragraph).append(System.lineSeparator());
            } else {
                for (String line : wrap(unescape(paragraph), width)) {
                    out.append(line).append(System.lineSeparator());
                }
            }
        }
        return out.toString();
    }

    /** Picocli's synopsis on one line, then wrapped at spaces, continued under the first option. */
    private static String synopsis(CommandLine.Help help) {
        UsageMessageSpec usage = help.commandSpec().usageMessage();
        int width = usage.width();
        String line;
        // Wide enough for any synopsis on one line; picocli allocates a row of this many columns.
        usage.width(4096);
        try {
            line = help.detailedSynopsis(0, null, true).strip();
        } finally {
            usage.width(width);
        }
        // The heading ("Usage: ") is a section of its own, printed just before.
        String name = help.commandSpec().qualifiedName();
        String rest = line.startsWith(name) ? line.substring(name.length()).strip() : line;
        int hang = Math.min(help.synopsisHeading().length() + name.length() + 1, width / 2);
        StringBuilder out = new StringBuilder(name);
        List<String> lines = wrap(rest, width - hang);
        for (int i = 0; i < lines.size(); i++) {
            out.append(i == 0 ? " " : " ".repeat(hang)).append(lines.get(i)).append(System.lineSeparator());
        }
        return lines.isEmpty() ? name + System.lineSeparator() : out.toString();
    }

    private static String parameters(CommandLine.Help help) {
        List<String[]> rows = new ArrayList<>();
        for (PositionalParamSpec p : help.commandSpec().positionalParameters()) {
            if (!p.hidden()) {
                rows.add(new String[] {parameterLabel(p), describe(p)});
            }
        }
        return table(help, rows, argumentColumn(help.commandSpec()));
    }

    private static String options(CommandLine.Help help) {
        List<String[]> rows = new ArrayList<>();
        for (OptionSpec o : help.commandSpec().options()) {
            if (!o.hidden()) {
                rows.add(new String[] {optionLabel(o), describe(o)});
            }
        }
        return table(help, rows, argumentColumn(help.commandSpec()));
    }

    /** Where the descriptions of a command's parameters and options start: one column for both lists. */
    private static int argumentColumn(CommandSpec spec) {
        int left = 0;
        for (PositionalParamSpec p : spec.positionalParameters()) {
            left = Math.max(left, parameterLabel(p).length());
        }
        for (OptionSpec o : spec.options()) {
            left = Math.max(left, optionLabel(o).length());
        }
        return Math.min(left, MAX_LEFT_COLUMN) + 2;
    }

    private static String parameterLabel(PositionalParamSpec p) {
        return "      " + p.paramLabel() + (p.arity().max() > 1 ? "..." : "");
    }

    /** An option as the help's left column shows it: {@code   -h, --help} or {@code       --policy=FILE}. */
    static String optionLabel(OptionSpec o) {
        String shortName = null;
        List<String> longNames = new ArrayList<>();
        for (String name : o.names()) {
            if (shortName == null && name.length() == 2 && name.startsWith("-")) {
                shortName = name;
            } else {
                longNames.add(name);
            }
        }
        String label = o.arity().max() == 0 ? "" : "=" + o.paramLabel();
        if (longNames.isEmpty()) {
            return "  " + shortName + label;
        }
        return "  " + (shortName == null ? "    " : shortName + ", ") + String.join(", ", longNames) + label;
    }

    /** An option's or parameter's description as one paragraph, with picocli's variables filled in. */
    static String describe(ArgSpec arg) {
        String text = String.join(" ", paragraphs(arg.description()));
        String defaultValue = arg.defaultValueString();
        return unescape(text.replace("${DEFAULT-VALUE}", defaultValue == null ? "" : defaultValue));
    }

    private static String commands(CommandLine.Help help) {
        List<String[]> rows = new ArrayList<>();
        for (Map.Entry<String, CommandLine.Help> e : help.subcommands().entrySet()) {
            CommandSpec sub = e.getValue().commandSpec();
            if (!sub.usageMessage().hidden()) {
                rows.add(new String[] {"  " + e.getKey(), summary(sub)});
            }
        }
        int left = 0;
        for (String[] row : rows) {
            left = Math.max(left, row[0].length());
        }
        return table(help, rows, Math.min(left, MAX_LEFT_COLUMN) + 2);
    }

    /**
     * Rows of a left column and a description wrapped beside it from {@code column} on; a left column too wide puts
     * it on its own line.
     */
    private static String table(CommandLine.Help help, List<String[]> rows, int column) {
        int width = help.commandSpec().usageMessage().width();
        String indent = " ".repeat(column);
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            List<String> lines = wrap(row[1], Math.max(20, width - column));
            boolean beside = row[0].length() + 2 <= column;
            if (!beside) {
                out.append(row[0]).append(System.lineSeparator());
            }
            for (int i = 0; i < lines.size(); i++) {
                String lead = i == 0 && beside ? row[0] + " ".repeat(column - row[0].length()) : indent;
                out.append(lead).append(lines.get(i)).append(System.lineSeparator());
            }
            if (lines.isEmpty() && beside) {
                out.append(row[0]).append(System.lineSeparator());
            }
        }
        return out.toString();
    }

    /** Picocli's format escapes in help text ({@code %%}) as printed. */
    private static String unescape(String text) {
        return text.replace("%%", "%");
    }
}
