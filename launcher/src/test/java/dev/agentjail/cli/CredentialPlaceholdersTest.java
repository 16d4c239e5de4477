package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A credential's placeholder is the same for one user, credential and project across sessions, and only then. */
class CredentialPlaceholdersTest {
    private static final String PREFIX = "agentjail-placeholder-";

    @TempDir
    Path dir;

    private String placeholder(Path project, String variable, int length) {
        return CredentialPlaceholders.forProject(dir.resolve("ca"), project, new SecureRandom())
                .placeholder(PREFIX, variable, length);
    }

    @Test
    void theSameProjectAndCredentialGetTheSamePlaceholderEverySession() {
        String first = placeholder(dir.resolve("p"), "ANTHROPIC_API_KEY", 108);
        String again = placeholder(dir.resolve("p"), "ANTHROPIC_API_KEY", 108);

        assertEquals(first, again);
        assertEquals(108, first.length());
        assertTrue(first.matches(PREFIX + "[0-9a-f]+"), first);
        assertNotEquals(first, placeholder(dir.resolve("q"), "ANTHROPIC_API_KEY", 108), "another project");
        assertNotEquals(first, placeholder(dir.resolve("p"), "OPENAI_API_KEY", 108), "another credential");
    }

    @Test
    void theKeyIsOnlyItsOwnersAndARelaxedOneIsRefused() throws Exception {
        placeholder(dir.resolve("p"), "KEY", 60);
        Path key = dir.resolve("ca").resolve(CredentialPlaceholders.FILE_NAME);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(key)));

        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
        CliException e = assertThrows(CliException.class, () -> placeholder(dir.resolve("p"), "KEY", 60));

        assertEquals(ExitCodes.ENVIRONMENT, e.exitCode());
        assertTrue(e.getMessage().contains("only its owner may read it"), e.getMessage());
    }

    @Test
    void sessionsStartingTogetherAgreeOnOneKey() throws Exception {
        var pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> all = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Callable<String> task = () -> placeholder(dir.resolve("p"), "KEY", 60);
                all.add(pool.submit(task));
            }
            String first = all.get(0).get();
            for (Future<String> f : all) {
                assertEquals(first, f.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
