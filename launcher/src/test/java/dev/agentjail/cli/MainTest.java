package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
    @Test
    void helpExitsZero() {
        assertEquals(ExitCodes.OK, Main.execute("--help"));
        assertEquals(ExitCodes.OK, Main.execute("run", "--help"));
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
