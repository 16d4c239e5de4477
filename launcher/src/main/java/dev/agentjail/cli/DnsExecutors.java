package dev.agentjail.cli;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** The bounded pool that runs blocking DNS lookups off the proxy's event loops. */
final class DnsExecutors {
    private static final int THREADS = 4;
    private static final int QUEUE = 1024;

    private DnsExecutors() {}

    /**
     * Up to four lookups at once (one slow name must not hold up the others), idle threads exit, and a
     * full queue refuses the lookup, which the proxy answers as a DNS failure.
     */
    static ExecutorService create() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                THREADS,
                THREADS,
                30,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(QUEUE),
                Thread.ofPlatform().daemon().name("dns-", 0).factory());
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
