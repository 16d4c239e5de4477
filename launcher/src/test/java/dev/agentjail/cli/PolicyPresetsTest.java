package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.Preset;
import dev.agentjail.policy.Presets;
import java.util.List;
import org.junit.jupiter.api.Test;

class PolicyPresetsTest {
    @Test
    void listsEveryPresetOnOneLineWithItsProgramsAndDescription() {
        CaCommandTest.Run run = CaCommandTest.run("policy", "presets");
        assertEquals(ExitCodes.OK, run.exitCode(), run.err());
        assertEquals("", run.err());
        List<String> lines = run.out().lines().toList();
        List<Preset> presets = Presets.all();
        assertEquals(presets.size() + 1, lines.size(), run.out());
        assertTrue(lines.get(0).matches("NAME +PROGRAMS +DESCRIPTION"), lines.get(0));
        int programsColumn = lines.get(0).indexOf("PROGRAMS");
        int descriptionColumn = lines.get(0).indexOf("DESCRIPTION");
        for (int i = 0; i < presets.size(); i++) {
            Preset preset = presets.get(i);
            String line = lines.get(i + 1);
            assertEquals(preset.name(), line.substring(0, programsColumn).strip(), line);
            assertEquals(
                    String.join(",", preset.binaries()),
                    line.substring(programsColumn, descriptionColumn).strip(),
                    line);
            assertEquals(preset.description(), line.substring(descriptionColumn), line);
        }
        assertTrue(run.out().contains("\nclaude-code "), run.out());
        assertTrue(run.out().lines().anyMatch(l -> l.startsWith("gemini-cli ") && l.contains(" gemini ")), run.out());
    }

    @Test
    void printsOnePresetVerbatimByName() {
        CaCommandTest.Run run = CaCommandTest.run("policy", "presets", "codex");
        assertEquals(ExitCodes.OK, run.exitCode(), run.err());
        assertEquals(Presets.named("codex").orElseThrow().yaml(), run.out());
        assertTrue(run.out().contains("preset:\n  name: codex\n"), run.out());
    }

    @Test
    void anUnknownPresetIsAUsageErrorThatListsTheKnownOnes() {
        CaCommandTest.Run run = CaCommandTest.run("policy", "presets", "claude");
        assertEquals(ExitCodes.USAGE, run.exitCode(), run.out());
        assertEquals("", run.out());
        assertTrue(run.err().contains("unknown preset 'claude'"), run.err());
        assertTrue(run.err().contains("claude-code"), run.err());
    }

    @Test
    void helpSaysWhatAPresetIsAndHowToUseOne() {
        CaCommandTest.Run run = CaCommandTest.run("policy", "presets", "--help");
        assertEquals(ExitCodes.OK, run.exitCode(), run.err());
        assertTrue(run.out().startsWith("Usage: agentjail policy presets"), run.out());
        assertTrue(run.out().contains("extends: [claude-code]"), run.out());
        assertTrue(run.out().contains("agentjail run claude"), run.out());
        assertTrue(run.out().contains("telemetry"), run.out());
        assertTrue(run.out().contains("[NAME]"), run.out());
        assertTrue(run.out().contains("--preset NAME"), run.out());
        // Written to fit: picocli would wrap longer description lines mid-sentence.
        run.out().lines().forEach(line -> assertTrue(line.length() <= 80, () -> "wrapped: " + line));
    }

    @Test
    void takesAtMostOneName() {
        CaCommandTest.Run run = CaCommandTest.run("policy", "presets", "codex", "pi");
        assertEquals(ExitCodes.USAGE, run.exitCode(), run.out());
    }
}
