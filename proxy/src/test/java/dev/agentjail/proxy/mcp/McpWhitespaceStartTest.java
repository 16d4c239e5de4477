package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A body to a destination that is not an approved MCP server whose start is only white space (in some reading) is
 * decided once 64 KiB are in, like any other (docs/mcp.md: "held until it is complete or 64 KiB of it are in"), and
 * streams on, followed to its end: the proxy never holds more than the start, whatever the client sends.
 */
@ExtendWith(NettyLeakGuard.class)
class McpWhitespaceStartTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int MIB = 1024 * 1024;

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

    /** A body whose start is plain text streams on at once (the upstream sees bytes before the end). */
    @Test
    void aTextStartStreamsOnAtOnce() throws Exception {
        assertStreams((byte) 'x', "text/plain", 4 * MIB);
    }

    /** 16 MiB of spaces (JSON white space in UTF-8): decided once 64 KiB are in, then it streams on. */
    @Test
    void aWhiteSpaceStartIsDecidedAt64KiBAndStreamsOn() throws Exception {
        assertStreams((byte) ' ', "application/json", 4 * MIB);
    }

    /** The same with line feeds and text/plain: no JSON type needed. */
    @Test
    void aLineFeedStartToo() throws Exception {
        assertStreams((byte) '\n', "text/plain", 4 * MIB);
    }

    /**
     * Sends {@code total} bytes of {@code fill} of a body announced four times as long, and asserts that the upstream
     * got body bytes while the body is still streaming, as the documentation promises once 64 KiB are in.
     */
    private void assertStreams(byte fill, String type, int total) throws Exception {
        long announced = 4L * total;
        String authority = "other.test:" + upstream.port();
        String head = "POST http://" + authority + "/upload HTTP/1.1\r\nHost: " + authority + "\r\nContent-Type: "
                + type + "\r\nContent-Length: " + announced + "\r\n\r\n";
        try (RawClient client = RawClient.connect(proxy.address)) {
            client.send(head.getBytes(StandardCharsets.ISO_8859_1));
            byte[] part = new byte[MIB];
            Arrays.fill(part, fill);
            for (int sent = 0; sent < total; sent += part.length) {
                client.send(part);
            }
            boolean streamed = RecordingUpstream.await(
                    () -> upstream.received().length() > head.length() + 64 * 1024, Duration.ofSeconds(5));
            assertTrue(
                    streamed,
                    "after " + total + " bytes of 0x" + Integer.toHexString(fill & 0xff) + " ("
                            + type + ") the upstream received only "
                            + upstream.received().length()
                            + " bytes on " + upstream.connections()
                            + " connection(s): the proxy holds the whole body");
            assertEquals(0, upstream.requests().size());
        }
    }
}
