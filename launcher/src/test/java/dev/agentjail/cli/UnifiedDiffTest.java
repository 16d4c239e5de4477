package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The diff text, exactly as {@code diff -u} would print it for the same edit. */
class UnifiedDiffTest {
    @Test
    void anInsertionGetsThreeLinesOfContextEachSide() {
        String before = "1\n2\n3\n4\n5\n6\n7\n8\n";
        String after = "1\n2\n3\n4\n5\nnew\n6\n7\n8\n";
        assertEquals(
                "--- a\n+++ b\n@@ -3,6 +3,7 @@\n 3\n 4\n 5\n+new\n 6\n 7\n 8\n",
                UnifiedDiff.of(before, after, "a", "b"));
    }

    @Test
    void aNewFileIsAddedToDevNull() {
        assertEquals(
                "--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+version: 1\n+x: y\n",
                UnifiedDiff.of("", "version: 1\nx: y\n", "/dev/null", "f"));
    }

    @Test
    void aLastLineThatGainsItsNewlineIsMarked() {
        assertEquals(
                "--- f\n+++ f\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n",
                UnifiedDiff.of("a\nb", "a\nb\nc\n", "f", "f"));
    }

    @Test
    void whatATerminalWouldActOnIsEscaped() {
        assertEquals(
                "--- f\n+++ f\n@@ -1 +1,2 @@\n # \\u001b[2J\n+x\n",
                UnifiedDiff.of("# \u001b[2J\n", "# \u001b[2J\nx\n", "f", "f"));
    }

    @Test
    void equalTextsHaveNoDiff() {
        assertEquals("", UnifiedDiff.of("a\n", "a\n", "f", "f"));
    }
}
