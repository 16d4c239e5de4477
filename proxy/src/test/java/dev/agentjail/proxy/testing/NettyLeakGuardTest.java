package dev.agentjail.proxy.testing;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

class NettyLeakGuardTest {
    @Test
    void aLeakedBufferFailsTheGuard() {
        leakOne();
        AssertionError error = assertThrows(AssertionError.class, () -> new NettyLeakGuard().afterAll(null));
        assertTrue(error.getMessage().contains("LEAK") || error.getMessage().contains("ByteBuf"), error.getMessage());
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeLong(42);
        // Dropped without release on purpose.
    }
}
