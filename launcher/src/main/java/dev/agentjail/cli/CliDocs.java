package dev.agentjail.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import picocli.AutoComplete;
import picocli.CommandLine;

/**
 * Writes the man pages and shell completions of the CLI into a directory, for bin/package: {@code man1/*.1},
 * {@code completion/agentjail.bash} (picocli's), {@code completion/_agentjail} (the same through zsh's bashcompinit)
 * and {@code completion/agentjail.fish} ({@link FishCompletion}).
 */
public final class CliDocs {
    private CliDocs() {}

    /** {@code CliDocs DIR}. */
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: CliDocs DIR");
            System.exit(ExitCodes.USAGE);
        }
        write(Path.of(args[0]));
    }

    static void write(Path dir) throws IOException {
        // A fixed width: a man page is filled by man, and the build's terminal must not shape the files.
        CommandLine root = commandLine();
        String version = new Main.Version().getVersion()[0];
        Path man = Files.createDirectories(dir.resolve("man1"));
        for (Map.Entry<String, String> page : ManPages.all(root, version).entrySet()) {
            Files.writeString(man.resolve(page.getKey()), page.getValue());
        }
        Path completion = Files.createDirectories(dir.resolve("completion"));
        String bash = bash(root);
        Files.writeString(completion.resolve("agentjail.bash"), bash);
        Files.writeString(completion.resolve("_agentjail"), zsh(bash));
        Files.writeString(completion.resolve("agentjail.fish"), FishCompletion.script(root));
    }

    /** The whole command tree, laid out at a fixed width. */
    static CommandLine commandLine() {
        CommandLine root = Main.commandLine();
        HelpLayout.install(root, Map.of("COLUMNS", "80"));
        return root;
    }

    static String bash(CommandLine root) {
        return AutoComplete.bash("agentjail", root);
    }

    /**
     * A zsh completion function file: zsh runs its body at the first completion of agentjail, which loads the bash
     * completion through bashcompinit (registering it for the next ones) and completes this one with it.
     */
    static String zsh(String bash) {
        return "#compdef agentjail\n"
                + "# zsh completion for agentjail: its bash completion, run through zsh's bashcompinit.\n"
                + bash
                + "\n_bash_complete -F _complete_agentjail -o default\n";
    }
}
