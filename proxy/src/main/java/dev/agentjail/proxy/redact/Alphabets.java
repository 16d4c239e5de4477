package dev.agentjail.proxy.redact;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Byte tables of the encoded layers: base64 (both alphabets) and hex values, and the classes a region is read by. */
final class Alphabets {
    private Alphabets() {}

    /** 1: a base64 character (either alphabet), 2: a line break, 0: anything else. */
    static final byte[] REGION = new byte[256];

    static final byte[] BASE64_VALUE = new byte[256];
    static final byte[] HEX_VALUE = new byte[256];
    /** What may follow a backslash in an escape some receiver decodes. */
    static final boolean[] ESCAPE_NEXT = new boolean[256];

    static final byte[] BASE64_STD =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".getBytes(StandardCharsets.US_ASCII);
    static final byte[] BASE64_URL =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);
    static final byte[] HEX_LOWER = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    static final byte[] HEX_UPPER = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);

    static {
        Arrays.fill(HEX_VALUE, (byte) -1);
        for (int k = 0; k < 64; k++) {
            BASE64_VALUE[BASE64_STD[k]] = (byte) k;
            BASE64_VALUE[BASE64_URL[k]] = (byte) k;
            REGION[BASE64_STD[k]] = 1;
            REGION[BASE64_URL[k]] = 1;
        }
        for (byte c : "uxnrtbf/\\\"'".getBytes(StandardCharsets.US_ASCII)) {
            ESCAPE_NEXT[c] = true;
        }
        REGION['\n'] = 2;
        REGION['\r'] = 2;
        for (int k = 0; k < 16; k++) {
            HEX_VALUE[HEX_LOWER[k]] = (byte) k;
            HEX_VALUE[HEX_UPPER[k]] = (byte) k;
        }
    }
}
