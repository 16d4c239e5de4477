package dev.agentjail.proxy.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SystemResolverTest {

    /** An executor that only queues, so the test decides when and on which thread lookups run. */
    private static final class QueueingExecutor implements java.util.concurrent.Executor {
        final List<Runnable> tasks = new ArrayList<>();

        @Override
        public void execute(Runnable command) {
            tasks.add(command);
        }
    }

    @Test
    void neverResolvesOnTheCallersThread() {
        QueueingExecutor executor = new QueueingExecutor();
        CompletableFuture<List<InetAddress>> future = new SystemResolver(executor).resolve("127.0.0.1");

        assertFalse(future.isDone(), "the lookup ran on the caller's thread");
        assertEquals(1, executor.tasks.size());
        executor.tasks.get(0).run();
        assertEquals(List.of("127.0.0.1"), hostAddresses(future.join()));
    }

    @Test
    void resolvesOnTheGivenExecutor() throws Exception {
        Thread caller = Thread.currentThread();
        Thread[] ranOn = new Thread[1];
        SystemResolver resolver = new SystemResolver(task -> {
            Thread t = new Thread(() -> {
                ranOn[0] = Thread.currentThread();
                task.run();
            });
            t.start();
        });

        List<InetAddress> addresses = resolver.resolve("::1").get(10, TimeUnit.SECONDS);

        assertEquals(1, addresses.size());
        assertTrue(addresses.get(0).isLoopbackAddress());
        assertNotEquals(caller, ranOn[0]);
    }

    @Test
    void unknownNameFailsWithUnknownHostException() {
        QueueingExecutor executor = new QueueingExecutor();
        // .invalid never resolves (RFC 6761), whether or not this machine has DNS.
        CompletableFuture<List<InetAddress>> future = new SystemResolver(executor).resolve("nx.agentjail.invalid");
        executor.tasks.forEach(Runnable::run);

        assertInstanceOf(UnknownHostException.class, cause(future));
    }

    @Test
    void emptyNameIsUnknownRatherThanLoopback() {
        QueueingExecutor executor = new QueueingExecutor();
        CompletableFuture<List<InetAddress>> future = new SystemResolver(executor).resolve(" ");

        assertInstanceOf(UnknownHostException.class, cause(future));
        assertTrue(executor.tasks.isEmpty());
    }

    @Test
    void fullExecutorFailsTheLookupInsteadOfRunningItInline() {
        CompletableFuture<List<InetAddress>> future = new SystemResolver(task -> {
                    throw new RejectedExecutionException("full");
                })
                .resolve("127.0.0.1");

        assertInstanceOf(RejectedExecutionException.class, cause(future));
    }

    private static Throwable cause(CompletableFuture<?> future) {
        assertTrue(future.isCompletedExceptionally(), "expected a failed future");
        try {
            future.join();
            throw new AssertionError("unreachable");
        } catch (CompletionException e) {
            return e.getCause();
        }
    }

    private static List<String> hostAddresses(List<InetAddress> addresses) {
        return addresses.stream().map(InetAddress::getHostAddress).toList();
    }
}
