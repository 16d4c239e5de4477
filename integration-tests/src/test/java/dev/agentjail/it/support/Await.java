package dev.agentjail.it.support;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Bounded polling for things that happen shortly after a client sees its response (tunnel records, log lines). */
public final class Await {
    private Await() {}

    /** Polls {@code condition} every 20 ms until it holds, failing with {@code message} after {@code limit}. */
    public static void until(Duration limit, BooleanSupplier condition, Supplier<String> message) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within " + limit + ": " + message.get());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted while waiting: " + message.get());
            }
        }
    }
}
