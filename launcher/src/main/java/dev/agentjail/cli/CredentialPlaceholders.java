package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Placeholders that stay the same for one user, credential and project across sessions, so that an agent that
 * remembers which key it was shown (claude-code asks again for every key it has not approved, by the key's last
 * characters) keeps working. Each is an HMAC-SHA256 of the project's real path and the credential's variable under a
 * per-user secret kept next to the CA's key ({@value #FILE_NAME}, 0600), which no jail ever sees.
 *
 * <p>Why that is safe: a placeholder is no secret. It is swapped for the real value only by the proxy, only in the
 * rule's header, only to the rule's hosts over verified TLS; anywhere else it is redacted like a secret. Knowing it
 * from an earlier session gains an agent nothing it does not have in the current one, and it says nothing about the
 * real value (it does not depend on it) nor about another project's placeholder (the HMAC key never leaves the host).
 */
final class CredentialPlaceholders {
    static final String FILE_NAME = "placeholder.key";

    private static final int KEY_BYTES = 32;
    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rw-------");

    private final byte[] key;
    private final Path project;

    private CredentialPlaceholders(byte[] key, Path project) {
        this.key = key;
        this.project = project;
    }

    /** The placeholders of {@code project}, with the key in {@code caDir} (made on first use). */
    static CredentialPlaceholders forProject(Path caDir, Path project, SecureRandom random) {
        Path file = caDir.resolve(FILE_NAME);
        try {
            Files.createDirectories(
                    caDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                create(file, random);
            }
            return new CredentialPlaceholders(
                    read(file), project.toAbsolutePath().normalize());
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot use the placeholder key " + file + ": " + IoErrors.describe(file, e),
                    e);
        }
    }

    /** Writes a new key beside the file and links it in; when another session got there first, its key stays. */
    private static void create(Path file, SecureRandom random) throws IOException {
        byte[] key = new byte[KEY_BYTES];
        random.nextBytes(key);
        Path temp = Files.createTempFile(
                file.getParent(), "." + FILE_NAME, ".tmp", PosixFilePermissions.asFileAttribute(PRIVATE));
        try {
            Files.write(
                    temp, HexFormat.of().formatHex(key).getBytes(StandardCharsets.US_ASCII), StandardOpenOption.WRITE);
            try {
                Files.createLink(file, temp);
            } catch (FileAlreadyExistsException e) {
                // Another session made it a moment ago: both use that one.
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    private static byte[] read(Path file) throws IOException {
        PosixFileAttributes attributes =
                Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!attributes.isRegularFile()) {
            throw new IOException("not a regular file");
        }
        if (!attributes.permissions().equals(PRIVATE)) {
            throw new IOException("its mode is " + PosixFilePermissions.toString(attributes.permissions())
                    + "; only its owner may read it (chmod 600 it, or remove it for a new one)");
        }
        int owner = (Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int self = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (owner != self) {
            throw new IOException("it belongs to uid " + owner + ", not to you");
        }
        String text = Files.readString(file, StandardCharsets.US_ASCII).strip();
        if (!text.matches("[0-9a-f]{" + 2 * KEY_BYTES + "}")) {
            throw new IOException("it holds no key (remove it for a new one)");
        }
        return HexFormat.of().parseHex(text);
    }

    /** The placeholder for {@code variable} in this project: {@code prefix} and hex, {@code length} characters long. */
    String placeholder(String prefix, String variable, int length) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            StringBuilder hex = new StringBuilder();
            for (int block = 0; hex.length() < length - prefix.length(); block++) {
                mac.update((project + "\0" + variable + "\0" + block).getBytes(StandardCharsets.UTF_8));
                hex.append(HexFormat.of().formatHex(mac.doFinal()));
            }
            return prefix + hex.substring(0, length - prefix.length());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has HmacSHA256", e);
        }
    }
}
