package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LockHoldersTest {

    @TempDir
    Path dir;

    // dev 0xfd01 (major 253, minor 1) as stat(2) gives it.
    private static final long DEV = (253L << 8) | 1;

    @Test
    void findsTheWriterOfTheByteAndSkipsReadersWaitersAndOtherFiles() {
        List<String> locks = List.of(
                "1: POSIX  ADVISORY  READ  500 fd:01:77 1 1",
                "2: POSIX  ADVISORY  WRITE 600 fd:01:78 0 0",
                "3: FLOCK  ADVISORY  WRITE 700 fd:01:77 0 EOF",
                "4: POSIX  ADVISORY  WRITE 800 fd:01:77 0 0",
                "4: -> POSIX  ADVISORY  WRITE 900 fd:01:77 0 0");
        assertEquals(OptionalLong.of(800), LockHolders.holder(locks, DEV, 77, 0));
        assertEquals(OptionalLong.empty(), LockHolders.holder(locks, DEV, 77, 1), "byte 1 is only read-locked");
        assertEquals(OptionalLong.empty(), LockHolders.holder(locks, DEV + 1, 77, 0), "another device");
    }

    @Test
    void aLockToTheEndOfTheFileCoversEveryByteFromItsStart() {
        List<String> locks = List.of("1: POSIX  ADVISORY  WRITE 42 fd:01:77 5 EOF");
        assertEquals(OptionalLong.empty(), LockHolders.holder(locks, DEV, 77, 4));
        assertEquals(OptionalLong.of(42), LockHolders.holder(locks, DEV, 77, 1L << 40));
    }

    @Test
    void namesThisProcessForALockItHolds() throws Exception {
        Path file = dir.resolve("x.lock");
        try (FileChannel ch = FileChannel.open(
                        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                FileLock held = ch.lock(0, 1, false)) {
            String said = LockHolders.describe(file, 0);
            assertEquals("process " + ProcessHandle.current().pid(), said.replaceFirst(" \\(.*\\)$", ""), said);
            assertEquals("another writer", LockHolders.describe(file, 7), "nobody holds byte 7");
        }
    }
}
