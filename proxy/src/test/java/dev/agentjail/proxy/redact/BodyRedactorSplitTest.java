package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.redact.Canaries.Canary;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A secret split across any chunk boundary is still found, and the output is the same as in one piece. */
class BodyRedactorSplitTest {
    private static final Redactor REDACTOR = Redactor.builder()
            .knownValue("known:HOST_TOKEN", "host-secret/with\"quote+plus")
            .customPattern("acme-token", java.util.regex.Pattern.compile("acme_[a-z0-9]{16}"), "acme_")
            .build();

    static Stream<Canary> canaries() {
        return Canaries.all().stream();
    }

    private static byte[] body(Canary canary) {
        String json = "{\"a\":\"x\\n" + JsonCheck.escape(canary.before() + canary.secret(), true)
                + "\",\"b\":\"\\u0061cme_0123456789abcdef and host-secret\\/with\\\"quote+plus\","
                + "\"c\":\"" + JsonCheck.escape(canary.before() + canary.secret(), false) + "\"}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] run(byte[] in, BodyKind kind, Findings findings, int[] chunkSizes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyRedactor redactor = REDACTOR.bodyRedactor(kind, findings);
        int pos = 0;
        int i = 0;
        while (pos < in.length) {
            int n = Math.min(in.length - pos, chunkSizes[i++ % chunkSizes.length]);
            redactor.feed(in, pos, n, out::write);
            pos += n;
        }
        redactor.finish(out::write);
        return out.toByteArray();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("canaries")
    void oneBytePerChunkAndRandomChunksMatchWholeBuffer(Canary canary) {
        byte[] in = body(canary);
        Findings whole = new Findings();
        byte[] expected = REDACTOR.redactBody(in, BodyKind.JSON, "body", whole);
        assertEquals(4, whole.total(), whole.toString());
        JsonCheck.validate(new String(expected, StandardCharsets.UTF_8));

        Findings single = new Findings();
        assertArrayEquals(expected, run(in, BodyKind.JSON, single, new int[] {1}));
        assertEquals(whole.list(), single.list());

        Random random = new Random(canary.secret().hashCode());
        int[] sizes = random.ints(64, 1, 40).toArray();
        Findings chunked = new Findings();
        assertArrayEquals(expected, run(in, BodyKind.JSON, chunked, sizes));
        assertEquals(whole.list(), chunked.list());
    }

    @Test
    void byteBufferFeedMatchesArrayFeed() {
        Canary canary = Canaries.all().get(0);
        byte[] in = body(canary);
        byte[] expected = REDACTOR.redactBody(in, BodyKind.JSON, "body", new Findings());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyRedactor redactor = REDACTOR.bodyRedactor(BodyKind.JSON, new Findings());
        ByteBuffer direct = ByteBuffer.allocateDirect(in.length);
        direct.put(in).flip();
        redactor.feed(direct, out::write);
        redactor.finish(out::write);
        assertArrayEquals(expected, out.toByteArray());
    }

    @Test
    void holdBackStaysBoundedOnAnOpenEndedSecretAndLargeChunks() {
        // A PEM header followed by endless key-like material, then a JWT-looking run: never released early,
        // never held beyond the documented bound.
        StringBuilder s = new StringBuilder("{\"k\":\"-----BEGIN PRIVATE KEY-----\\n");
        while (s.length() < 3 * 1024 * 1024) {
            s.append("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo\\n");
        }
        s.append("\"}");
        byte[] in = s.toString().getBytes(StandardCharsets.US_ASCII);
        BodyRedactor redactor = REDACTOR.bodyRedactor(BodyKind.JSON, new Findings());
        long[] released = new long[1];
        int bound = 6 * BodyRedactor.MAX_HOLD_BACK_DECODED + BodyRedactor.SLICE;
        for (int pos = 0; pos < in.length; pos += 100_000) {
            redactor.feed(in, pos, Math.min(100_000, in.length - pos), (b, o, n) -> released[0] += n);
            assertTrue(redactor.heldBack() <= bound, "held back " + redactor.heldBack());
        }
        redactor.finish((b, o, n) -> released[0] += n);
        assertEquals(in.length, released[0]);
        assertEquals(0, redactor.heldBack());
    }
}
