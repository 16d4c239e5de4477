package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class BwrapStatusTest {
    @Test
    void readsChildPidAndExitCode() {
        BwrapStatus status = BwrapStatus.parse(
                "{ \"child-pid\": 20602, \"cgroup-namespace\": 4026532181, \"pid-namespace\": 4026532180 }\n"
                        + "{ \"exit-code\": 3 }\n");
        assertEquals(OptionalLong.of(20602), status.childPid());
        assertEquals(OptionalInt.of(3), status.exitCode());
    }

    @Test
    void aSetupFailureLeavesNoChildPid() {
        BwrapStatus status = BwrapStatus.parse("");
        assertEquals(OptionalLong.empty(), status.childPid());
        assertEquals(OptionalInt.empty(), status.exitCode());
    }
}
