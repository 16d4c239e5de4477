package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Attack (issue 17, item 8, again): a short MCP call in UTF-16 or UTF-32 to an unapproved host, whose body arrives
 * with its first byte alone in the first body part that reaches the MCP gate. A first client part of one byte does not
 * do it (the redactor holds it back), but a first part of five bytes does (a chunk of 5 bytes, or a Content-Length
 * body whose first 5 bytes the client flushes on their own): the redactor releases one byte of it and holds four. McpDetection.decide decides on that one byte: JsonCharset.detect sees one byte (UTF-8),
 * 0xFF / 0xFE / 0x00 is neither JSON nor an SSE field, so the verdict is NOT_MCP at once; McpTail.of, given the same
 * one byte, finds no live reading and returns null, so the rest is not followed either. The whole call reaches the
 * upstream, which (Python's json.loads on bytes, Jackson) detects the BOM / zero pattern and reads a tools/call.
 */
@ExtendWith(NettyLeakGuard.class)
class AttackFirstByteTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String CALL =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete_repo\"}}";

    private RecordingUpstream upstream;
    private McpProxy proxy;

    @BeforeEach
    void start() throws Exception {
        upstream = RecordingUpstream.start();
        proxy = new McpProxy(upstream.port());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    static Stream<Arguments> bodies() {
        return Stream.of(
                Arguments.of("UTF-16LE with BOM", bytes("\uFEFF" + CALL, StandardCharsets.UTF_16LE)),
                Arguments.of("UTF-16BE with BOM", bytes("\uFEFF" + CALL, StandardCharsets.UTF_16BE)),
                Arguments.of("UTF-16BE without BOM", bytes(CALL, StandardCharsets.UTF_16BE)),
                Arguments.of("UTF-32BE without BOM", bytes(CALL, Charset.forName("UTF-32BE"))),
                Arguments.of("UTF-32LE with BOM", bytes("\uFEFF" + CALL, Charset.forName("UTF-32LE"))));
    }

    /** Control: the same bodies in one piece are refused (403) today. */
    @ParameterizedTest(name = "{0}, in one piece")
    @MethodSource("bodies")
    void inOnePieceRefused(String name, byte[] body) throws Exception {
        RawResponse r = sendChunked(body, body.length);
        assertEquals(403, r.status(), name + ": " + r.statusLine());
    }

    @ParameterizedTest(name = "{0}, chunked, first chunk one byte")
    @MethodSource("bodies")
    void firstChunkOfOneByte(String name, byte[] body) throws Exception {
        RawResponse r = sendChunked(body, 1);
        assertEquals(403, r.status(), name + ": " + r.statusLine() + "; upstream got " + upstream.requests());
        assertEquals(0, upstream.requests().size());
    }

    @ParameterizedTest(name = "{0}, chunked, first chunks of 1..12 bytes")
    @MethodSource("bodies")
    void firstChunksOfAFewBytes(String name, byte[] body) throws Exception {
        for (int k = 1; k <= 12; k++) {
            RawResponse r = sendChunked(body, k);
            assertEquals(
                    403,
                    r.status(),
                    name + " k=" + k + ": " + r.statusLine() + "; the upstream received "
                            + upstream.requests().size()
                            + " complete request(s), the last body read as JSON parsers detect it: "
                            + lastBodyDecoded());
        }
        assertEquals(0, upstream.requests().size());
    }

    @ParameterizedTest(name = "{0}, Content-Length, first 5 bytes flushed alone")
    @MethodSource("bodies")
    void contentLengthFirstFiveBytesAlone(String name, byte[] body) throws Exception {
        contentLengthFirstBytesAlone(name, body, 5);
    }

    @ParameterizedTest(name = "{0}, Content-Length, first byte flushed alone")
    @MethodSource("bodies")
    void contentLengthFirstByteAlone(String name, byte[] body) throws Exception {
        contentLengthFirstBytesAlone(name, body, 1);
    }

    private void contentLengthFirstBytesAlone(String name, byte[] body, int k) throws Exception {
        String authority = "other.test:" + upstream.port();
        String head = "POST http://" + authority + "/rpc HTTP/1.1\r\nHost: " + authority
                + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n";
        try (RawClient c = RawClient.connect(proxy.address)) {
            c.send(concat(head.getBytes(StandardCharsets.ISO_8859_1), Arrays.copyOf(body, k)));
            Thread.sleep(300);
            c.send(Arrays.copyOfRange(body, k, body.length));
            RawResponse r = c.readResponse(WAIT);
            assertEquals(
                    403, r.status(), name + " k=" + k + ": " + r.statusLine() + "; upstream got: " + lastBodyDecoded());
        }
        assertEquals(0, upstream.requests().size());
    }

    /** The last body the upstream received, decoded as Python's json.loads would detect its encoding. */
    private String lastBodyDecoded() {
        if (upstream.requests().isEmpty()) {
            return "(none)";
        }
        byte[] b = upstream.requests().getLast().body().getBytes(StandardCharsets.ISO_8859_1);
        Charset cs = (b[0] & 0xff) == 0xff && b[1] == (byte) 0xfe && b[2] == 0 && b[3] == 0
                ? Charset.forName("UTF-32LE")
                : (b[0] & 0xff) == 0xff || (b[0] & 0xff) == 0xfe
                        ? StandardCharsets.UTF_16
                        : b[0] == 0 && b[1] == 0
                                ? Charset.forName("UTF-32BE")
                                : b[0] == 0 ? StandardCharsets.UTF_16BE : StandardCharsets.UTF_16LE;
        return new String(b, cs).replace("\uFEFF", "").replace("\u0000", "");
    }

    private RawResponse sendChunked(byte[] body, int first) throws Exception {
        String authority = "other.test:" + upstream.port();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("POST http://" + authority + "/rpc HTTP/1.1\r\nHost: " + authority
                        + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        chunk(out, body, 0, first);
        if (first < body.length) {
            chunk(out, body, first, body.length - first);
        }
        out.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        try (RawClient c = RawClient.connect(proxy.address)) {
            c.send(out.toByteArray());
            return c.readResponse(WAIT);
        }
    }

    private static void chunk(ByteArrayOutputStream out, byte[] b, int off, int n) {
        out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b, off, n);
        out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] bytes(String s, Charset charset) {
        return s.getBytes(charset);
    }
}
