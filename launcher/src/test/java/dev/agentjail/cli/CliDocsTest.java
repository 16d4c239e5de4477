package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The CLI explains itself: the version line, help wrapped once at the width (no line longer, no word split), an
 * example section in every command's help, man pages that man renders without a warning, and completions that
 * complete.
 */
class CliDocsTest {
    @TempDir
    Path dir;

    @Test
    void versionNamesTheVersionAndTheCommit() throws Exception {
        String line = new Main.Version().getVersion()[0];
        assertTrue(line.matches("agentjail [^ ]+ \\(commit [^ )]+\\)"), line);
        assertEquals("agentjail 0.1.0 (commit 1a2b3c4d5e6f)", Main.Version.line("0.1.0", "1a2b3c4d5e6f"));
    }

    @Test
    void durationsArePrintedAsPeopleWriteThem() {
        assertEquals("2s", Durations.format(Duration.ofSeconds(2)));
        assertEquals("90s", Durations.format(Duration.ofSeconds(90)));
        assertEquals("30m", Durations.format(Duration.ofMinutes(30)));
        assertEquals("2h", Durations.format(Duration.ofHours(2)));
        assertEquals("1500ms", Durations.format(Duration.ofMillis(1500)));
        assertEquals(Duration.ofMinutes(30), Durations.parse(Durations.format(Duration.ofMinutes(30)), "--timeout"));
    }

    /** Every command of the tree, the root's first. */
    private static List<CommandLine> commands(CommandLine cli) {
        List<CommandLine> all = new ArrayList<>(List.of(cli));
        for (CommandLine sub : ManPages.subcommands(cli)) {
            all.addAll(commands(sub));
        }
        return all;
    }

    private static String help(CommandLine cli) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        cli.usage(new PrintWriter(out, true, StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpIsWrappedOnceAtTheWidthWithNoWordSplit() {
        // Examples are written to fit 80 columns and kept as written; 80 is the narrowest width checked line by line.
        for (int width : new int[] {80, 120, 200}) {
            CommandLine root = Main.commandLine();
            HelpLayout.install(root, Map.of("COLUMNS", Integer.toString(width)));
            for (CommandLine cli : commands(root)) {
                String help = help(cli);
                for (String line : help.lines().toList()) {
                    assertTrue(line.length() <= width, cli.getCommandName() + " at " + width + ": " + line);
                }
                // Every word of the descriptions whole ("~/.local/share/agentjail/ca", not "~/." and "local/share…").
                java.util.Set<String> words = java.util.Set.copyOf(descriptionWords(help));
                List<String> source = new ArrayList<>(HelpLayout.paragraphs(
                        cli.getCommandSpec().usageMessage().description()));
                cli.getCommandSpec().options().forEach(o -> source.add(HelpLayout.describe(o)));
                for (String paragraph : source) {
                    for (String word : paragraph.strip().split("\\s+")) {
                        assertTrue(
                                word.isEmpty() || words.contains(word),
                                cli.getCommandName() + ": " + word + " in\n" + help);
                    }
                }
            }
            // The same words in the same order at every width: wrapping only moves line breaks.
            if (width == 200) {
                CommandLine narrow = Main.commandLine();
                HelpLayout.install(narrow, Map.of("COLUMNS", "60"));
                List<CommandLine> wide = commands(root);
                List<CommandLine> narrowOnes = commands(narrow);
                for (int i = 0; i < wide.size(); i++) {
                    assertEquals(
                            descriptionWords(help(wide.get(i))),
                            descriptionWords(help(narrowOnes.get(i))),
                            wide.get(i).getCommandName());
                }
            }
        }
    }

    /** The words of a help text, without the padding of its columns. */
    private static List<String> descriptionWords(String help) {
        return List.of(help.strip().split("\\s+"));
    }

    @Test
    void aSummaryInTheCommandListIsAWholeSentence() {
        String help = help(Main.commandLine("policy", "--help").getSubcommands().get("policy"));
        assertTrue(help.contains("check    Validates policy files.\n"), help);
        String root = help(Main.commandLine());
        assertFalse(root.contains("where\n"), root);
    }

    @Test
    void everyCommandsHelpHasExamples() {
        for (CommandLine cli : commands(Main.commandLine())) {
            String help = help(cli);
            assertTrue(help.contains("Examples:\n"), cli.getCommandSpec().qualifiedName() + ":\n" + help);
            assertTrue(help.contains("    agentjail "), cli.getCommandSpec().qualifiedName() + ":\n" + help);
        }
    }

    @Test
    void everyManPageRendersWithoutAWarning() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/man")) || ci(), "man is not installed");
        CliDocs.write(dir);
        List<Path> pages;
        try (Stream<Path> s = Files.list(dir.resolve("man1"))) {
            pages = s.sorted().toList();
        }
        assertEquals(commands(Main.commandLine()).size(), pages.size(), pages.toString());
        for (Path page : pages) {
            // man -l page 2>&1 >/dev/null: the warnings only.
            Result r = sh("MANWIDTH=80 man -l \"$1\" 2>&1 >/dev/null", page.toString());
            assertEquals("", r.out(), page.getFileName().toString());
            assertEquals(0, r.code(), page.getFileName().toString());
            Result text = sh("MANWIDTH=80 man -l \"$1\" 2>/dev/null", page.toString());
            assertTrue(text.out().contains("EXAMPLES"), page + ":\n" + text.out());
        }
        String run = sh(
                        "MANWIDTH=80 man -l \"$1\"",
                        dir.resolve("man1/agentjail-run.1").toString())
                .out();
        assertTrue(run.contains("--preset=NAME"), run);
        assertTrue(run.contains("~/.local/share/agentjail/ca"), run);
    }

    @Test
    void bashCompletionRegistersAndOffersOptions() throws Exception {
        CliDocs.write(dir);
        Path script = dir.resolve("completion/agentjail.bash");
        Result registered = sh("source \"$1\" && complete -p agentjail", script.toString());
        assertEquals(
                "complete -o default -F _complete_agentjail agentjail",
                registered.out().strip());
        Result preset = sh(
                "source \"$1\"; COMP_WORDS=(agentjail run --pre); COMP_CWORD=2; COMP_LINE='agentjail run --pre';"
                        + " COMP_POINT=${#COMP_LINE}; _complete_agentjail 2>/dev/null; printf '%s\\n' \"${COMPREPLY[@]}\"",
                script.toString());
        assertEquals("--preset", preset.out().strip());
        Result commands = sh(
                "source \"$1\"; COMP_WORDS=(agentjail po); COMP_CWORD=1; COMP_LINE='agentjail po';"
                        + " COMP_POINT=${#COMP_LINE}; _complete_agentjail 2>/dev/null; printf '%s\\n' \"${COMPREPLY[@]}\"",
                script.toString());
        assertEquals("policy", commands.out().strip());
    }

    @Test
    void zshAndFishCompletionsNameEveryCommand() throws Exception {
        CliDocs.write(dir);
        String zsh = Files.readString(dir.resolve("completion/_agentjail"));
        assertTrue(zsh.startsWith("#compdef agentjail\n"), zsh);
        assertTrue(zsh.contains("bashcompinit"), zsh);
        String fish = Files.readString(dir.resolve("completion/agentjail.fish"));
        assertTrue(fish.contains("complete -c agentjail -n '__agentjail_at -x' -a 'run'"), fish);
        assertTrue(fish.contains("complete -c agentjail -n '__agentjail_at -x log' -a 'tail'"), fish);
        assertTrue(fish.contains("complete -c agentjail -n '__agentjail_at run' -l preset -r"), fish);
    }

    private record Result(int code, String out) {}

    private static Result sh(String script, String arg) throws Exception {
        Process p = new ProcessBuilder("bash", "-c", script, "bash", arg)
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new Result(p.exitValue(), out);
    }

    private static boolean ci() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }
}
