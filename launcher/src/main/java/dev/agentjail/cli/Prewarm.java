package dev.agentjail.cli;

import io.netty.channel.epoll.Epoll;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * A head start for a session's set-up on the second core: while the session's thread reads the command line and the
 * policy, this thread configures logging, reads the system's root certificates and loads Netty's native transport,
 * work the session needs whatever its arguments say. Everything here is idempotent and creates no files; a failure
 * only means the session does the work itself, and reports it then.
 *
 * <p>Logging comes first, and the session waits for it ({@link #awaitLogging()}) before it touches anything that logs
 * (Netty logs as its classes initialise): SLF4J hands a thread that logs while another is still configuring it a
 * stand-in logger, and afterwards prints a warning about the calls it replayed.
 */
final class Prewarm {
    /** Long enough for a loaded machine; past it the session goes on and risks no more than that warning. */
    private static final long LOGGING_WAIT_SECONDS = 5;

    private static final CountDownLatch LOGGING = new CountDownLatch(1);
    private static volatile boolean started;

    private Prewarm() {}

    /** Starts the head start for a command that sets up a proxy ({@code run}). */
    static void start() {
        started = true;
        Thread thread = new Thread(new Work(), "agentjail-prewarm");
        thread.setDaemon(true);
        thread.start();
    }

    /** Returns once logging is configured, when the head start is running; at once otherwise. */
    static void awaitLogging() {
        if (!started) {
            return;
        }
        try {
            LOGGING.await(LOGGING_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Work implements Runnable {
        @Override
        public void run() {
            try {
                LoggerFactory.getILoggerFactory();
            } catch (RuntimeException | LinkageError e) {
                // The session configures it on first use instead.
            } finally {
                LOGGING.countDown();
            }
            try {
                SystemRoots.prefetch();
                Epoll.isAvailable();
            } catch (RuntimeException | LinkageError e) {
                // Only a head start: the session runs the same steps and reports what fails.
            }
        }
    }
}
