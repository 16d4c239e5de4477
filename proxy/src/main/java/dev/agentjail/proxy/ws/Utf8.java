package dev.agentjail.proxy.ws;

import io.netty.buffer.ByteBuf;

/** Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF, no cut-off sequence. */
final class Utf8 {
    private Utf8() {}

    static boolean valid(ByteBuf b, int from, int to) {
        int i = from;
        while (i < to) {
            int c = b.getUnsignedByte(i);
            if (c < 0x80) {
                i++;
                continue;
            }
            int n;
            int min;
            if (c >= 0xc2 && c <= 0xdf) {
                n = 1;
                min = 0x80;
            } else if (c >= 0xe0 && c <= 0xef) {
                n = 2;
                min = 0x800;
            } else if (c >= 0xf0 && c <= 0xf4) {
                n = 3;
                min = 0x10000;
            } else {
                return false;
            }
            if (i + n >= to) {
                return false;
            }
            int cp = c & (0x3f >> n);
            for (int k = 1; k <= n; k++) {
                int cc = b.getUnsignedByte(i + k);
                if ((cc & 0xc0) != 0x80) {
                    return false;
                }
                cp = (cp << 6) | (cc & 0x3f);
            }
            if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                return false;
            }
            i += n + 1;
        }
        return true;
    }
}
