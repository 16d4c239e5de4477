package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class HostLayoutTest {
    @Test
    void probeRecreatesMergedUsrSymlinksInsteadOfBindingThem() throws IOException {
        HostLayout layout = HostLayout.probe();
        assertTrue(layout.systemDirs().contains(Path.of("/usr")));
        for (Path candidate : HostLayout.SYSTEM_CANDIDATES) {
            boolean link = Files.isSymbolicLink(candidate);
            assertEquals(
                    link,
                    layout.rootLinks().stream().anyMatch(l -> l.link().equals(candidate)),
                    candidate + " symlink on the host");
            if (link) {
                assertFalse(layout.systemDirs().contains(candidate));
                String target = Files.readSymbolicLink(candidate).toString();
                assertTrue(layout.rootLinks().contains(new HostLayout.RootLink(candidate, target)));
            }
        }
        assertEquals(HostLayout.ETC_DEFAULTS, layout.etcEntries());
    }

    @Test
    void etcDefaultsLeaveOutSecretsAndResolverConfiguration() {
        for (String forbidden :
                new String[] {"/etc", "/etc/ssl", "/etc/ssl/private", "/etc/shadow", "/etc/resolv.conf"}) {
            assertFalse(HostLayout.ETC_DEFAULTS.contains(Path.of(forbidden)), forbidden);
        }
    }
}
