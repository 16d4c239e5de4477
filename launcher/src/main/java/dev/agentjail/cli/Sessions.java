package dev.agentjail.cli;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Makes session identifiers: random, so that records of different sessions never collide. */
final class Sessions {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Sessions() {}

    static String newId() {
        byte[] b = new byte[8];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
