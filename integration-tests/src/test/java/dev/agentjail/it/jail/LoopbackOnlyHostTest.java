package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.agentjail.it.support.Command;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a host whose only interface is {@code lo} (a container, a network namespace) a session prints nothing but its
 * own lines: no warning from Netty about a missing hardware address.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LoopbackOnlyHostTest {
    @TempDir
    Path dir;

    @Test
    void aSessionOnALoopbackOnlyHostPrintsNoHardwareAddressWarning() {
        AgentjailRun.requireBwrap();
        // As RootLaunchTest: the root pass of CI runs it, the unprivileged pass skips it.
        assumeTrue(AgentjailRun.isRoot(), "a network namespace of its own needs root");
        AgentjailRun run = AgentjailRun.in(dir);
        // A network namespace of its own with lo up: lo is the only interface, as in a container.
        List<String> argv = new ArrayList<>(
                List.of("unshare", "--net", "--", "sh", "-c", "ip link set lo up && exec \"$@\"", "sh"));
        argv.addAll(run.argv(List.of("/bin/true")));

        Command.Result r = Command.run(AgentjailRun.PROCESS_LIMIT, argv, run.launcherEnv(), run.project());

        assertEquals(0, r.exitCode(), r::describe);
        assertFalse(r.stderr().contains("MacAddressUtil"), r::describe);
        assertFalse(r.stderr().contains("hardware address"), r::describe);
    }
}
