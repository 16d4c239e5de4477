package dev.agentjail.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * Writes one man page (roff, section 1) per command from its picocli model: the same descriptions, options and
 * examples as its help. Picocli's own ManPageGenerator writes AsciiDoc, which needs Asciidoctor to become roff; the
 * man macros needed here are a handful.
 */
final class ManPages {
    private ManPages() {}

    /** Every command's page, by file name ({@code agentjail-log-tail.1}), the root command's first. */
    static Map<String, String> all(CommandLine root, String version) {
        Map<String, String> pages = new LinkedHashMap<>();
        add(root, version, pages);
        return pages;
    }

    private static void add(CommandLine cli, String version, Map<String, String> pages) {
        CommandSpec spec = cli.getCommandSpec();
        pages.put(pageName(spec) + ".1", page(cli, version));
        for (CommandLine sub : subcommands(cli)) {
            add(sub, version, pages);
        }
    }

    /** The commands listed under {@code cli}: its own, without picocli's help command and aliases. */
    static List<CommandLine> subcommands(CommandLine cli) {
        List<CommandLine> subs = new ArrayList<>();
        for (Map.Entry<String, CommandLine> e : cli.getSubcommands().entrySet()) {
            CommandSpec sub = e.getValue().getCommandSpec();
            boolean alias = !e.getKey().equals(sub.name());
            if (!alias && !sub.usageMessage().hidden() && !(sub.userObject() instanceof CommandLine.HelpCommand)) {
                subs.add(e.getValue());
            }
        }
        return subs;
    }

    /** {@code agentjail-log-tail} for {@code agentjail log tail}. */
    static String pageName(CommandSpec spec) {
        return spec.qualifiedName("-");
    }

    static String page(CommandLine cli, String version) {
        CommandSpec spec = cli.getCommandSpec();
        StringBuilder out = new StringBuilder();
        String name = spec.qualifiedName(" ");
        out.append(".TH \"")
                .append(pageName(spec).toUpperCase(Locale.ROOT))
                .append("\" 1 \"\" \"")
                .append(escape(version))
                .append("\" \"agentjail manual\"\n");
        // Ragged right, no hyphenation: option names and paths must survive the fill whole.
        out.append(".ad l\n.nh\n");
        out.append(".SH NAME\n")
                .append(escape(pageName(spec)))
                .append(" \\- ")
                .append(escape(HelpLayout.summary(spec)))
                .append('\n');
        out.append(".SH SYNOPSIS\n");
        out.append(".B ").append(escape(name)).append('\n');
        out.append(escape(synopsisArguments(cli))).append('\n');
        out.append(".SH DESCRIPTION\n");
        paragraphs(out, HelpLayout.paragraphs(spec.usageMessage().description()));
        List<PositionalParamSpec> parameters =
                spec.positionalParameters().stream().filter(p -> !p.hidden()).toList();
        if (!parameters.isEmpty()) {
            out.append(".SH ARGUMENTS\n");
            for (PositionalParamSpec p : parameters) {
                item(out, "\\fI" + escape(p.paramLabel()) + "\\fR" + (p.arity().max() > 1 ? "..." : ""), p);
            }
        }
        List<OptionSpec> options =
                spec.options().stream().filter(o -> !o.hidden()).toList();
        if (!options.isEmpty()) {
            out.append(".SH OPTIONS\n");
            for (OptionSpec o : options) {
                StringBuilder term = new StringBuilder();
                for (String n : o.names()) {
                    term.append(term.isEmpty() ? "" : ", ")
                            .append("\\fB")
                            .append(escape(n))
                            .append("\\fR");
                }
                if (o.arity().max() > 0) {
                    term.append("=\\fI").append(escape(o.paramLabel())).append("\\fR");
                }
                item(out, term.toString(), o);
            }
        }
        List<CommandLine> subs = subcommands(cli);
        if (!subs.isEmpty()) {
            out.append(".SH COMMANDS\n");
            for (CommandLine sub : subs) {
                CommandSpec s = sub.getCommandSpec();
                out.append(".TP\n\\fB").append(escape(s.name())).append("\\fR\n");
                out.append(escapeLine(HelpLayout.summary(s) + " See " + pageName(s) + "(1)."))
                        .append('\n');
            }
        }
        String[] footer = spec.usageMessage().footer();
        if (footer.length > 0) {
            out.append(".SH EXAMPLES\n");
            paragraphs(out, HelpLayout.paragraphs(footer));
        }
        out.append(".SH EXIT STATUS\n");
        for (ExitCodes.Row row : ExitCodes.TABLE) {
            out.append(".TP\n").append(escape(row.codes())).append('\n');
            out.append(escapeLine(row.meaning())).append('\n');
        }
        out.append(".SH SEE ALSO\n");
        List<String> related = new ArrayList<>();
        if (spec.parent() != null) {
            related.add(pageName(spec.parent()));
        }
        for (CommandLine sub : subs) {
            related.add(pageName(sub.getCommandSpec()));
        }
        if (related.isEmpty() || spec.parent() != null) {
            related.add("bwrap");
        }
        StringBuilder see = new StringBuilder();
        for (String r : related) {
            see.append(see.isEmpty() ? "" : ",\n")
                    .append(".BR ")
                    .append(escape(r))
                    .append(" (1)");
        }
        out.append(see).append('\n');
        return out.toString();
    }

    /** The synopsis after the command's name, as help prints it but on one line (man fills it). */
    private static String synopsisArguments(CommandLine cli) {
        CommandLine.Help help = new CommandLine.Help(
                cli.getCommandSpec(), CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
        String synopsis = help.detailedSynopsis(0, null, true).strip().replaceAll("\\s+", " ");
        String name = cli.getCommandSpec().qualifiedName(" ");
        return synopsis.startsWith(name) ? synopsis.substring(name.length()).strip() : synopsis;
    }

    private static void item(StringBuilder out, String term, ArgSpec arg) {
        out.append(".TP\n").append(term).append('\n');
        out.append(escapeLine(HelpLayout.describe(arg))).append('\n');
    }

    /** Paragraphs as {@code .PP}; indented lines (examples) unfilled, as written. */
    private static void paragraphs(StringBuilder out, List<String> paragraphs) {
        boolean verbatim = false;
        boolean pending = true;
        for (String p : paragraphs) {
            if (p.isEmpty()) {
                if (verbatim) {
                    out.append(".fi\n");
                    verbatim = false;
                }
                pending = true;
            } else if (p.startsWith(" ")) {
                if (!verbatim) {
                    out.append(pending ? ".PP\n" : "").append(".nf\n");
                    verbatim = true;
                    pending = false;
                }
                out.append(escapeLine(p)).append('\n');
            } else {
                if (verbatim) {
                    out.append(".fi\n");
                    verbatim = false;
                }
                out.append(".PP\n").append(escapeLine(p)).append('\n');
                pending = false;
            }
        }
        if (verbatim) {
            out.append(".fi\n");
        }
    }

    /** Text for roff: backslashes and hyphens escaped, a leading dot or quote made literal. */
    static String escapeLine(String text) {
        String e = escape(text);
        return e.startsWith(".") || e.startsWith("'") ? "\\&" + e : e;
    }

    static String escape(String text) {
        return text.replace("\\", "\\e").replace("-", "\\-");
    }
}
