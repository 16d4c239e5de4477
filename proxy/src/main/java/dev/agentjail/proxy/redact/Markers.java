package dev.agentjail.proxy.redact;

import java.nio.charset.StandardCharsets;

/**
 * Writes same-length markers over a secret's raw bytes, so framing and Content-Length never change.
 * Bracket markers ({@code [REDACTED:kind**]}) are valid in JSON strings and header values; URL-safe markers
 * ({@code _REDACTED.kind~~_}) use only unreserved characters, valid in a request target or a form body.
 */
final class Markers {
    private static final byte[] BRACKET_HEAD = "[REDACTED".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] URL_HEAD = "_REDACTED".getBytes(StandardCharsets.US_ASCII);

    private Markers() {}

    static void fill(byte[] dst, int off, int len, String kind, boolean urlSafe) {
        byte[] head = urlSafe ? URL_HEAD : BRACKET_HEAD;
        byte open = urlSafe ? (byte) '.' : (byte) ':';
        byte pad = urlSafe ? (byte) '~' : (byte) '*';
        byte close = urlSafe ? (byte) '_' : (byte) ']';
        byte[] name = kind.getBytes(StandardCharsets.US_ASCII);
        int full = head.length + 1 + name.length + 1;
        int p = off;
        if (len >= full) {
            System.arraycopy(head, 0, dst, p, head.length);
            p += head.length;
            dst[p++] = open;
            for (byte b : name) {
                dst[p++] = urlSafe && b == ':' ? (byte) '.' : b;
            }
        } else if (len >= head.length + 1) {
            System.arraycopy(head, 0, dst, p, head.length);
            p += head.length;
        } else {
            java.util.Arrays.fill(dst, off, off + len, pad);
            return;
        }
        int end = off + len - 1;
        while (p < end) {
            dst[p++] = pad;
        }
        dst[end] = close;
    }
}
