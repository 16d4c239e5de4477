package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** RunArgs reads what it accepts exactly as picocli does, and leaves everything else to picocli. */
class RunArgsTest {
    static Stream<String> accepted() {
        return Stream.of(
                "run -- true",
                "run true",
                "run claude --resume",
                "run claude -p hi --port 1",
                "run --policy a.yaml --policy=b.yaml --preset claude -- claude -p hi",
                "run --preset codex codex",
                "run --project=/tmp/x --audit-log /tmp/a.jsonl --timeout 90s --ca-dir ca --port 8080"
                        + " --audit-max-size 1g --audit-hmac-key k -- sh -c exit",
                "run --port=0 -- true",
                "run --port 65535 true",
                "run -- claude -- x",
                "run claude -- x",
                "run --policy= -- true",
                "run --timeout=2h -- -dash-first");
    }

    @ParameterizedTest
    @MethodSource("accepted")
    void readsWhatItAcceptsAsPicocliDoes(String line) {
        String[] args = line.split(" ");
        RunArgs.Parsed fast = RunArgs.parse(args).orElseThrow(() -> new AssertionError("declined: " + line));
        CommandLine cli = Main.commandLine(args);
        CommandLine.ParseResult parsed = cli.parseArgs(args);
        RunCommand picocli = (RunCommand) cli.getSubcommands().get("run").getCommand();
        assertEquals(describe(picocli), describe(fast.command()), line);
        assertEquals(
                RunCommand.separated(parsed.originalArgs(), picocli.command.size()),
                fast.separated(),
                "separated: " + line);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "run",
                "run --",
                "run --help",
                "run -h",
                "run --version",
                "run -V -- true",
                "run --policy",
                "run --policy -- true",
                "run --project a --project b -- true",
                "run --port abc -- true",
                "run --port 01 -- true",
                "run --port 99999999999 -- true",
                "run --port=-1 -- true",
                "run --bogus x -- true",
                "run -x -- true",
                "run --preset=x",
                "proxy --policy p.yaml",
            })
    void leavesEverythingElseToPicocli(String line) {
        assertTrue(RunArgs.parse(line.split(" ")).isEmpty(), line);
    }

    @Test
    void knowsExactlyRunsOptions() {
        CommandLine run = Main.commandLine("run").getSubcommands().get("run");
        Set<String> all = new TreeSet<>();
        Set<String> multi = new TreeSet<>();
        for (OptionSpec option : run.getCommandSpec().options()) {
            if (option.usageHelp() || option.versionHelp()) {
                continue;
            }
            all.addAll(Arrays.asList(option.names()));
            if (option.isMultiValue()) {
                multi.addAll(Arrays.asList(option.names()));
            }
        }
        Set<String> known = new TreeSet<>(RunArgs.SINGLE);
        known.addAll(RunArgs.REPEATABLE);
        assertEquals(all, known);
        assertEquals(multi, new TreeSet<>(RunArgs.REPEATABLE));
    }

    private static List<Object> describe(RunCommand c) {
        return List.of(
                c.policyFiles,
                c.presets,
                String.valueOf(c.project),
                String.valueOf(c.auditLog),
                String.valueOf(c.timeout),
                String.valueOf(c.caDir),
                c.port,
                c.auditChain.maxSize,
                String.valueOf(c.auditChain.hmacKey),
                c.command);
    }
}
