package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
    @Test
    void helpExitsZero() {
        assertEquals(ExitCodes.OK, Main.execute("--help"));
        assertEquals(ExitCodes.OK, Main.execute("run", "--help"));
    }

    @Test
    void aNamedSubcommandIsTheOnlyOneBuiltAndEverythingElseGetsThemAll() {
        List<String> all = List.of("run", "proxy", "policy", "init", "ca", "log", "report", "review", "help");
        assertEquals(
                List.of("run"),
                List.copyOf(
                        Main.commandLine("run", "--", "true").getSubcommands().keySet()));
        assertEquals(
                List.of("log"),
                List.copyOf(Main.commandLine("log", "verify").getSubcommands().keySet()));
        assertEquals(all, List.copyOf(Main.commandLine().getSubcommands().keySet()));
        assertEquals(
                all,
                List.copyOf(Main.commandLine("help", "run").getSubcommands().keySet()));
        assertEquals(
                all, List.copyOf(Main.commandLine("--help").getSubcommands().keySet()));
        // An unknown command still gets picocli's suggestions among every real one.
        assertEquals(all, List.copyOf(Main.commandLine("rnu").getSubcommands().keySet()));
        assertEquals(ExitCodes.OK, Main.execute("help", "run"));
        assertEquals(ExitCodes.USAGE, Main.execute("rnu"));
    }

    @Test
    void badUsageExitsTwo() {
        assertEquals(ExitCodes.USAGE, Main.execute("proxy"));
        assertEquals(ExitCodes.USAGE, Main.execute("run"));
        assertEquals(ExitCodes.USAGE, Main.execute("run", "--timeout", "soon", "--", "true"));
    }

    @Test
    void aMalformedPolicyExitsTwoBeforeAnythingStarts(@TempDir Path dir) throws Exception {
        Path policy = dir.resolve("policy.yaml");
        Files.writeString(policy, "version: 1\nnetwork:\n  alow: [x.test]\n");
        assertEquals(
                ExitCodes.USAGE,
                Main.execute("run", "--policy", policy.toString(), "--project", dir.toString(), "--", "true"));
    }
}
