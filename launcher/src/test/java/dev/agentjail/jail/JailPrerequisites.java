package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Platform prerequisites of the real-jail tests: skipped locally when missing, a failure in CI. */
final class JailPrerequisites {
    static final Path BWRAP = Path.of("/usr/bin/bwrap");

    private JailPrerequisites() {}

    static void require(boolean present, String what) {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(present, what + " is required in CI");
        } else {
            assumeTrue(present, what + " is missing");
        }
    }

    static void requireBwrap() {
        require(Files.isExecutable(BWRAP), "bwrap at " + BWRAP);
    }

    static void requireCurl() {
        require(Files.isExecutable(Path.of("/usr/bin/curl")), "curl at /usr/bin/curl");
    }

    /** Compiles a C test probe with the system compiler. */
    static Path compile(Path dir, String name, String source) throws IOException, InterruptedException {
        Path c = Files.writeString(dir.resolve(name + ".c"), source);
        Path out = dir.resolve(name);
        Process cc;
        try {
            cc = new ProcessBuilder(List.of("cc", "-O0", "-o", out.toString(), c.toString()))
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            require(false, "a C compiler (cc)");
            throw e;
        }
        String output = new String(cc.getInputStream().readAllBytes());
        assertTrue(cc.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, cc.exitValue(), output);
        return out;
    }
}
