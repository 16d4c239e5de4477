package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Of the host's files the jail sees the project and the read-only system, nothing else (corpus §11 case 172): a file
 * next to the project and one in the host's /tmp are absent, /tmp is the jail's own, and a symlink the agent plants
 * in the project cannot carry a write out of the jail.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class FilesystemViewTest {
    @TempDir
    Path dir;

    @Test
    void onlyTheProjectAndTheSystemAreVisibleAndSymlinksDoNotEscape() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path sibling = Files.writeString(dir.resolve("next-to-the-project.txt"), "sibling secret\n");
        String marker = "agentjail-it-" + ThreadLocalRandom.current().nextLong(1L << 40, 1L << 41);
        Path hostTmp = Files.writeString(Path.of("/tmp", marker + "-host"), "host tmp secret\n");
        Path escaped = Path.of("/tmp", marker + "-escaped");
        try {
            AgentjailRun.Outcome o = run.bash("""
                    cat %1$s 2>/dev/null; echo "sibling=$?"
                    cat %2$s 2>/dev/null; echo "host_tmp=$?"
                    echo "tmp_entries=$(ls -A /tmp | grep -vc '^junit')"
                    ln -s / root && echo escaped > root/tmp/%3$s-escaped; echo "symlink_write=$?"
                    ln -s %4$s up && echo escaped > up/planted; echo "symlink_parent=$?"
                    """.formatted(sibling, hostTmp, marker, dir));

            assertEquals(0, o.exitCode(), o::describe);
            assertAll(
                    () -> assertNotEquals("0", o.probe("sibling"), "a file next to the project is visible"),
                    () -> assertNotEquals("0", o.probe("host_tmp"), "the host's /tmp is visible"),
                    () -> assertEquals("0", o.probe("tmp_entries"), "/tmp inside holds host entries; " + o.describe()));
            assertFalse(Files.exists(escaped), "a write through a symlink in the project reached the host's /tmp");
            assertFalse(Files.exists(dir.resolve("planted")), "a write through a symlink reached the project's parent");
            assertEquals("sibling secret\n", Files.readString(sibling));
        } finally {
            Files.deleteIfExists(hostTmp);
            Files.deleteIfExists(escaped);
        }
    }
}
