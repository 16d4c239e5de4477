package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditHmacKeyTest {

    private static final String SECRET = "0123456789abcdef0123456789abcdef-canary";

    @TempDir
    Path dir;

    private Path keyFile(String content, String mode) throws IOException {
        Path file = dir.resolve("audit.key");
        Files.writeString(file, content, StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private static byte[] mac(AuditHmacKey key) {
        return key.newMac().doFinal("line".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void aTrailingLineBreakIsNotPartOfTheKey() throws Exception {
        byte[] plain = mac(AuditHmacKey.load(keyFile(SECRET, "rw-------")));

        assertArrayEquals(plain, mac(AuditHmacKey.load(keyFile(SECRET + "\n", "rw-------"))));
        assertArrayEquals(plain, mac(AuditHmacKey.load(keyFile(SECRET + "\r\n", "r--------"))));
        assertFalse(java.util.Arrays.equals(plain, mac(AuditHmacKey.load(keyFile(SECRET + "x", "rw-------")))));
    }

    @Test
    void aKeyFileOthersCanReadIsRefused() throws Exception {
        Path file = keyFile(SECRET, "rw-r-----");

        IOException e = assertThrows(IOException.class, () -> AuditHmacKey.load(file));

        assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), "the message never holds the key");
    }

    @Test
    void aShortKeyIsRefusedWithoutShowingIt() throws Exception {
        Path file = keyFile("short-canary-key\n", "rw-------");

        IOException e = assertThrows(IOException.class, () -> AuditHmacKey.load(file));

        assertTrue(e.getMessage().contains("shorter than 32 bytes"), e.getMessage());
        assertFalse(e.getMessage().contains("short-canary-key"), e.getMessage());
    }

    @Test
    void aHugeFileIsNotAKey() throws Exception {
        Path file = keyFile("k".repeat(AuditHmacKey.MAX_BYTES + 1), "rw-------");

        assertThrows(IOException.class, () -> AuditHmacKey.load(file));
    }

    @Test
    void aKeyCanComeThroughAPipeSoItNeverLiesOnDisk() throws Exception {
        Path fifo = dir.resolve("key.fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).start();
        assertEquals(0, mkfifo.waitFor());
        Thread writer = Thread.ofPlatform().start(() -> {
            try {
                Files.writeString(fifo, SECRET + "\n", StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });

        AuditHmacKey fromPipe = AuditHmacKey.load(fifo);
        writer.join();

        assertArrayEquals(mac(AuditHmacKey.load(keyFile(SECRET, "rw-------"))), mac(fromPipe));
    }

    @Test
    void theKeyNeverShowsInToString() throws Exception {
        AuditHmacKey key = AuditHmacKey.load(keyFile(SECRET, "rw-------"));

        assertEquals("AuditHmacKey[secret]", key.toString());
    }
}
