package dev.agentjail.proxy.audit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 fingerprints that let the audit log identify bytes without storing them. */
public final class Sha256 {

    private Sha256() {}

    /** Lower-case hex SHA-256 of {@code length} bytes of {@code data} from {@code offset}. */
    public static String hex(byte[] data, int offset, int length) {
        MessageDigest digest = newDigest();
        digest.update(data, offset, length);
        return HexFormat.of().formatHex(digest.digest());
    }

    /** Lower-case hex SHA-256 of the UTF-8 encoding of {@code text}. */
    public static String hex(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return hex(bytes, 0, bytes.length);
    }

    private static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            // Every Java SE implementation must provide SHA-256.
            throw new IllegalStateException(e);
        }
    }
}
