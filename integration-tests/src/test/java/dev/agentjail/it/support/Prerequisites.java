package dev.agentjail.it.support;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Checks that a platform prerequisite (curl, node, …) is present: a missing one skips the test locally and fails it in
 * CI ({@code CI=true}), where every prerequisite is installed on purpose.
 */
public final class Prerequisites {
    public static final Path CURL = Path.of("/usr/bin/curl");
    public static final Path NODE = Path.of("/usr/bin/node");
    /**
     * A Node.js new enough (>= 24.5) for {@code fetch} to follow {@code NODE_USE_ENV_PROXY}; the distribution's
     * Node 20 ignores proxy variables for fetch. {@code .ci/run} installs it here, under /usr so the jail sees it.
     */
    public static final Path MODERN_NODE = Path.of("/usr/local/lib/agentjail-ci/node/bin/node");

    private Prerequisites() {}

    /** Returns {@code executable} when it can be run; otherwise skips (locally) or fails (in CI). */
    public static Path require(Path executable) {
        require(Files.isExecutable(executable), executable + " is not installed");
        return executable;
    }

    /** Skips (locally) or fails (in CI) unless {@code present}. */
    public static void require(boolean present, String missing) {
        if (present) {
            return;
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            fail("prerequisite missing in CI: " + missing);
        }
        assumeTrue(false, "prerequisite missing: " + missing);
    }
}
