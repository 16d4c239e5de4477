package dev.agentjail.it.support;

import java.util.Random;

/** Reproducible payloads: binary, so that any byte the proxy altered or dropped shows up in the comparison. */
public final class TestData {
    private TestData() {}

    /** {@code n} pseudo-random bytes, the same for the same seed. */
    public static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }
}
