package dev.agentjail.cli;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A fish completion script from the command tree: subcommands by the words typed so far, each command's options
 * with their descriptions, file names after an option that takes a FILE, DIR or PATH.
 */
final class FishCompletion {
    private static final String HELPER = """
            # Whether the command words typed so far (the words not starting with -) start with the arguments;
            # with -x, whether they are exactly the arguments.
            function __agentjail_at
                set -l exact 0
                if test "$argv[1]" = -x
                    set exact 1
                    set -e argv[1]
                end
                set -l words
                for w in (commandline -opc)[2..-1]
                    string match -q -- '-*' $w; or set -a words $w
                end
                test (count $words) -ge (count $argv); or return 1
                if test $exact = 1; and test (count $words) -ne (count $argv)
                    return 1
                end
                for i in (seq (count $argv))
                    test "$words[$i]" = "$argv[$i]"; or return 1
                end
                return 0
            end

            """;

    private FishCompletion() {}

    static String script(CommandLine root) {
        StringBuilder out = new StringBuilder("# fish completion for agentjail, generated from its commands.\n");
        out.append(HELPER);
        out.append("complete -c agentjail -f\n");
        add(root, out);
        return out.toString();
    }

    private static void add(CommandLine cli, StringBuilder out) {
        CommandSpec spec = cli.getCommandSpec();
        String path = path(spec);
        List<CommandLine> subs = ManPages.subcommands(cli);
        for (CommandLine sub : subs) {
            out.append("complete -c agentjail -n ")
                    .append(quote("__agentjail_at -x" + path))
                    .append(" -a ")
                    .append(quote(sub.getCommandSpec().name()))
                    .append(" -d ")
                    .append(quote(HelpLayout.summary(sub.getCommandSpec())))
                    .append('\n');
        }
        for (OptionSpec o : spec.options()) {
            if (o.hidden()) {
                continue;
            }
            StringBuilder line = new StringBuilder("complete -c agentjail -n ")
                    .append(quote((subs.isEmpty() ? "__agentjail_at" : "__agentjail_at -x") + path));
            for (String name : o.names()) {
                line.append(name.startsWith("--") ? " -l " + name.substring(2) : " -s " + name.substring(1));
            }
            if (o.arity().max() > 0) {
                line.append(" -r");
                if (o.paramLabel().matches("FILE|DIR|PATH")) {
                    line.append(" -F");
                }
            }
            line.append(" -d ").append(quote(HelpLayout.firstSentence(HelpLayout.describe(o))));
            out.append(line).append('\n');
        }
        for (CommandLine sub : subs) {
            add(sub, out);
        }
    }

    /** " log tail" for {@code agentjail log tail}: the words after agentjail, each after a space. */
    private static String path(CommandSpec spec) {
        String name = spec.qualifiedName(" ");
        return name.equals(spec.root().name())
                ? ""
                : name.substring(spec.root().name().length());
    }

    private static String quote(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }
}
