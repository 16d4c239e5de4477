package dev.agentjail.proxy.mcp.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NettyLeakGuard.class)
class TokenGateTest {
    private static final byte[] TOKEN = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private static ByteBuf bytes(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    @Test
    void theRightTokenInPiecesLetsTheRestThroughAndLeavesThePipeline() {
        EmbeddedChannel ch = new EmbeddedChannel(new TokenGate(TOKEN));

        ch.writeInbound(bytes("01234567"));
        assertNull(ch.readInbound());
        ch.writeInbound(bytes("89abcdefPOST /mcp"));

        ByteBuf rest = ch.readInbound();
        assertEquals("POST /mcp", rest.toString(StandardCharsets.US_ASCII));
        rest.release();
        assertNull(ch.pipeline().get(TokenGate.NAME));
        assertTrue(ch.isOpen());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aWrongTokenClosesTheConnectionAndPassesNothing() {
        EmbeddedChannel ch = new EmbeddedChannel(new TokenGate(TOKEN));

        ch.writeInbound(bytes("POST http://docs.mcp.agentjail.internal/mcp HTTP/1.1\r\n"));

        assertFalse(ch.isOpen());
        assertFalse(ch.finishAndReleaseAll());
    }
}
