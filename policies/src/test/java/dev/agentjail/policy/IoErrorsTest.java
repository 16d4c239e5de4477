package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The OS reason of real I/O failures, and of the JDK's exceptions that carry only a path. */
class IoErrorsTest {
    @TempDir
    Path dir;

    @Test
    void theJdksPathOnlyExceptionsGetTheirReason() {
        assertEquals("permission denied", IoErrors.reason(new AccessDeniedException("/var/log/x")));
        assertEquals("no such file or directory", IoErrors.reason(new NoSuchFileException("/x")));
        assertEquals(
                "read-only file system", IoErrors.reason(new FileSystemException("/x", null, "Read-only file system")));
        assertEquals("no space left on device", IoErrors.reason(new IOException("No space left on device")));
        assertEquals(
                "/var/log/.aj.lock: permission denied",
                IoErrors.describe(new AccessDeniedException("/var/log/.aj.lock")));
    }

    @Test
    void theFileComesFirstOnlyWhenItIsAnotherOne() {
        Path log = Path.of("/var/log/aj.jsonl");
        assertEquals("permission denied", IoErrors.describe(log, new AccessDeniedException(log.toString())));
        assertEquals(
                "/var/log/.aj.jsonl.lock: permission denied",
                IoErrors.describe(log, new AccessDeniedException("/var/log/.aj.jsonl.lock")));
    }

    @Test
    void realFailuresOfTheFileSystem() throws IOException {
        Path file = Files.writeString(dir.resolve("file"), "x");
        // A path under a regular file fails the same way for root and for everyone else.
        Path under = file.resolve("child");
        IOException notDir = assertThrows(IOException.class, () -> Files.writeString(under, "y"));
        assertEquals(under + ": not a directory", IoErrors.describe(notDir));
        IOException missing = assertThrows(IOException.class, () -> Files.readString(dir.resolve("missing")));
        assertEquals("no such file or directory", IoErrors.describe(dir.resolve("missing"), missing));
        FileNotFoundException stream =
                assertThrows(FileNotFoundException.class, () -> new FileInputStream(dir.toFile()).close());
        assertEquals(dir + ": is a directory", IoErrors.describe(stream));
        IOException isDir = assertThrows(IOException.class, () -> Files.readString(dir));
        assertEquals("is a directory", IoErrors.reason(isDir));
    }

    @Test
    void aMessageBuiltFromAPathOnlyExceptionGetsItsReason() {
        AccessDeniedException cause = new AccessDeniedException("/ca");
        assertEquals(
                "cannot create the CA directory /ca: permission denied",
                IoErrors.message(new IllegalStateException("cannot create the CA directory /ca: /ca", cause)));
        AccessDeniedException lock = new AccessDeniedException("/var/log/.aj.lock");
        assertEquals(
                "audit log /var/log/aj is unwritable: /var/log/.aj.lock: permission denied",
                IoErrors.message(
                        new IllegalStateException("audit log /var/log/aj is unwritable: /var/log/.aj.lock", lock)));
        assertEquals(
                "/x: permission denied", IoErrors.message(new UncheckedIOException(new AccessDeniedException("/x"))));
        assertEquals("something else", IoErrors.message(new IllegalStateException("something else")));
    }
}
