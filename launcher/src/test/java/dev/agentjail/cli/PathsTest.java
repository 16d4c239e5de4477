package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PathsTest {
    @Test
    void theStateDirectoryIsXdgStateHomesWhenAbsoluteElseTheHomes() {
        assertEquals(Path.of("/s/agentjail"), Paths.stateHome(Map.of("XDG_STATE_HOME", "/s", "HOME", "/home/u")));
        // The XDG specification: a relative path is invalid and ignored (it would differ per working directory).
        assertEquals(
                Path.of("/home/u/.local/state/agentjail"),
                Paths.stateHome(Map.of("XDG_STATE_HOME", "state", "HOME", "/home/u")));
        assertEquals(
                Path.of("/home/u/.local/state/agentjail"),
                Paths.stateHome(Map.of("XDG_STATE_HOME", " ", "HOME", "/home/u")));
        assertEquals(
                Path.of("/home/u/.local/state/agentjail/audit.jsonl"),
                Paths.defaultAuditLog(Map.of("HOME", "/home/u")));
    }
}
