package dev.agentjail.proxy.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty's leak detector (paranoid in the test build) reports a leaked
 * buffer. Registered for every test through the JUnit extension service file.
 */
public final class NettyLeakGuard implements BeforeAllCallback, AfterAllCallback {
    private static final List<String> LEAKS = new ArrayList<>();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        synchronized (LEAKS) {
            LEAKS.clear();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        // Leaks are only noticed after the buffer was collected and a later allocation polls the queue.
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
            for (int j = 0; j < 64; j++) {
                ByteBuf probe = PooledByteBufAllocator.DEFAULT.buffer(16);
                probe.release();
            }
        }
        synchronized (LEAKS) {
            if (!LEAKS.isEmpty()) {
                String report = String.join("\n---\n", LEAKS);
                LEAKS.clear();
                throw new AssertionError("Netty reported leaked buffers:\n" + report);
            }
        }
    }

    /** Creates detectors that remember every leak report instead of only logging it. */
    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(
                Class<T> resource, int samplingInterval, long maxActive) {
            return new ResourceLeakDetector<>(resource, samplingInterval) {
                @Override
                protected void reportTracedLeak(String resourceType, String records) {
                    record(resourceType + records);
                    super.reportTracedLeak(resourceType, records);
                }

                @Override
                protected void reportUntracedLeak(String resourceType) {
                    record(resourceType + " (untraced)");
                    super.reportUntracedLeak(resourceType);
                }
            };
        }

        private static void record(String leak) {
            synchronized (LEAKS) {
                LEAKS.add(leak);
            }
        }
    }
}
