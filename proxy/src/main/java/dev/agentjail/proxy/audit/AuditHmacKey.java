package dev.agentjail.proxy.audit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret that lets the audit log carry an HMAC-SHA256 on every line, read from a file kept outside the jail.
 *
 * <p>The key is the file's bytes, without one trailing line break, and must be at least {@value #MIN_BYTES} bytes
 * long. A regular file must not be accessible to group or others (as ssh insists for private keys); a pipe such as
 * {@code <(pass show audit-key)} is read as it is. The key never appears in {@link #toString()}, messages or logs.
 */
public final class AuditHmacKey {

    public static final String ALGORITHM = "HmacSHA256";
    public static final int MIN_BYTES = 32;

    /** Far more than any sensible key; bounds what a wrong path (a log, a device) makes us read. */
    static final int MAX_BYTES = 4096;

    private static final Set<PosixFilePermission> GROUP_OR_OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_EXECUTE);

    private final SecretKeySpec key;

    private AuditHmacKey(byte[] bytes) {
        this.key = new SecretKeySpec(bytes, ALGORITHM);
    }

    /**
     * Reads the key from {@code file}.
     *
     * @throws IOException if the file cannot be read, is group- or world-accessible, or holds too short or too long a
     *     key; the message names the file, never its content
     */
    public static AuditHmacKey load(Path file) throws IOException {
        PosixFileAttributes attributes = Files.readAttributes(file, PosixFileAttributes.class);
        if (attributes.isRegularFile()) {
            Set<PosixFilePermission> loose = EnumSet.copyOf(GROUP_OR_OTHERS);
            loose.retainAll(attributes.permissions());
            if (!loose.isEmpty()) {
                throw new IOException("the audit HMAC key " + file + " is accessible to group or others (" + loose
                        + "); make it private: chmod 600 " + file);
            }
        } else if (attributes.isDirectory()) {
            throw new IOException("the audit HMAC key " + file + " is a directory");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        try {
            return fromBytes(bytes, file.toString());
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /** The key made of {@code bytes} (without one trailing line break); {@code source} names it in errors. */
    static AuditHmacKey fromBytes(byte[] bytes, String source) throws IOException {
        if (bytes.length > MAX_BYTES) {
            throw new IOException("the audit HMAC key " + source + " is longer than " + MAX_BYTES + " bytes");
        }
        int length = bytes.length;
        if (length > 0 && bytes[length - 1] == '\n') {
            length--;
            if (length > 0 && bytes[length - 1] == '\r') {
                length--;
            }
        }
        if (length < MIN_BYTES) {
            throw new IOException("the audit HMAC key " + source + " is shorter than " + MIN_BYTES
                    + " bytes; create one with: head -c 32 /dev/urandom | base64 > FILE");
        }
        byte[] key = Arrays.copyOf(bytes, length);
        try {
            return new AuditHmacKey(key);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    /** A fresh MAC initialised with this key; each thread (or each lock holder) uses its own. */
    public Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            // Every Java SE implementation must provide HmacSHA256, and any non-empty key is valid for it.
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "AuditHmacKey[secret]";
    }
}
