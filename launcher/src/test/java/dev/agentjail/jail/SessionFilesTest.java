package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionFilesTest {
    @TempDir
    Path dir;

    @Test
    void writesReadOnlyIdentityFilesThatNameOnlyTheAgent() throws IOException {
        SessionFiles files = SessionFiles.write(dir, "alice", 1000, 1000, Path.of("/home/alice"), "agentjail");
        assertEquals(
                "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                        + "alice:x:1000:1000:alice:/home/alice:/bin/sh\n"
                        + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                Files.readString(files.passwd()));
        assertEquals("root:x:0:\nalice:x:1000:\nnogroup:x:65534:\n", Files.readString(files.group()));
        assertEquals(
                "127.0.0.1\tlocalhost agentjail\n::1\tlocalhost ip6-localhost ip6-loopback\n",
                Files.readString(files.hosts()));
        assertEquals(0, Files.size(files.emptyFile()));
        assertEquals("r--r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(files.emptyFile())));
    }

    @Test
    void rootOnTheHostBecomesTheAgentUserInside() {
        assertEquals("agent", SessionFiles.insideUserName("root", 1000));
        assertEquals("agent", SessionFiles.insideUserName("Bad Name", 1000));
        assertEquals("agent", SessionFiles.insideUserName(null, 1000));
        assertEquals("bob", SessionFiles.insideUserName("bob", 1001));
    }
}
