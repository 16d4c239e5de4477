package dev.agentjail.proxy.mcp.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineReaderTest {
    private static List<String> lines(InputStream in, int max) throws IOException {
        List<String> out = new ArrayList<>();
        new LineReader(in, max).readAll(l -> out.add(new String(l, StandardCharsets.UTF_8)));
        return out;
    }

    private static InputStream of(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void splitsOnNewlineDropsCrAndEmptyLinesAndAnUnterminatedTail() throws Exception {
        assertEquals(
                List.of("{\"a\":1}", "{\"b\":2}", "{\"c\":3}"),
                lines(of("{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}\npartial"), 64));
    }

    @Test
    void aLineUpToTheCapPassesAndOneByteMoreFails() throws Exception {
        assertEquals(List.of("x".repeat(16)), lines(of("x".repeat(16) + "\n"), 16));
        assertThrows(LineReader.LineTooLongException.class, () -> lines(of("x".repeat(17) + "\n"), 16));
    }

    @Test
    void linesSpanningReadsAreJoined() throws Exception {
        // One byte per read: every line crosses read boundaries.
        InputStream slow = new InputStream() {
            private final InputStream in = of("{\"id\":1}\n{\"id\":2}\n");

            @Override
            public int read() throws IOException {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return in.read(b, off, Math.min(1, len));
            }
        };
        assertEquals(List.of("{\"id\":1}", "{\"id\":2}"), lines(slow, 64));
    }
}
