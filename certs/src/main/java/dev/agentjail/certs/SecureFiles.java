package dev.agentjail.certs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** Writes files so that a reader sees the old content or the new one, never a partial or over-permissive file. */
final class SecureFiles {
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    static final Set<PosixFilePermission> WORLD_READABLE = PosixFilePermissions.fromString("rw-r--r--");
    static final Set<PosixFilePermission> PRIVATE_DIR = PosixFilePermissions.fromString("rwx------");

    private SecureFiles() {}

    /**
     * Writes {@code content} to a temporary file in the target's directory, created with {@code
     * permissions} from the start (so a secret is never briefly readable), then renames it over the
     * target.
     */
    static void writeAtomically(Path target, byte[] content, Set<PosixFilePermission> permissions) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Path temp = Files.createTempFile(
                dir, "." + target.getFileName() + ".", ".tmp", PosixFilePermissions.asFileAttribute(permissions));
        try {
            // The umask may have removed bits we want (0644 under umask 077); it never adds any.
            Files.setPosixFilePermissions(temp, permissions);
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.wrap(content);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /** The permission bits as octal text, e.g. "0644". */
    static String mode(Set<PosixFilePermission> permissions) {
        int mode = 0;
        for (PosixFilePermission p : permissions) {
            mode |= 1 << (8 - p.ordinal());
        }
        return String.format("0%03o", mode);
    }
}
